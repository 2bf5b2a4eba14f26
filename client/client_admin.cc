// Client: queries and housekeeping — Contains, Delete, Evict, List, Stats, Subscribe.
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

#include "client/client.h"
#include "client/client_connection.h"
#include "client/reply_body.h"
#include "client/store_subscription.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

using client_internal::ExpectBody;
using client_internal::ExpectCodes;

}  // namespace

absl::StatusOr<bool> Client::Contains(const ObjectID& id) {
  ASSIGN_OR_RETURN(std::vector<bool> present, Contains(absl::Span<const ObjectID>(&id, 1)));
  return present[0];
}

absl::StatusOr<std::vector<bool>> Client::Contains(absl::Span<const ObjectID> ids) {
  std::vector<bool> present;
  present.reserve(ids.size());
  for (size_t start = 0; start < ids.size(); start += max_ids_per_request_) {
    absl::Span<const ObjectID> part = ids.subspan(start, max_ids_per_request_);
    ASSIGN_OR_RETURN(CodesReply codes,
                     ExpectCodes(connection_->Call(ContainsRequest{std::vector<ObjectID>(part.begin(), part.end())}),
                                 part.size(), "contains", part.size() == 1 ? part[0].Hex() : ""));
    for (size_t i = 0; i < part.size(); ++i) {
      switch (codes.codes[i]) {
        case ErrorCode::kOk: present.push_back(true); break;
        case ErrorCode::kObjectNotFound:
        case ErrorCode::kObjectNotSealed: present.push_back(false); break;
        default: return client_internal::ObjectError(codes.codes[i], "contains", part[i].Hex());
      }
    }
  }
  return present;
}

absl::Status Client::Delete(absl::Span<const ObjectID> ids) {
  size_t failed = 0;
  absl::Status first_error;
  for (size_t start = 0; start < ids.size(); start += max_ids_per_request_) {
    absl::Span<const ObjectID> part = ids.subspan(start, max_ids_per_request_);
    ASSIGN_OR_RETURN(CodesReply codes,
                     ExpectCodes(connection_->Call(DeleteRequest{std::vector<ObjectID>(part.begin(), part.end())}),
                                 part.size(), "delete", part.size() == 1 ? part[0].Hex() : ""));
    for (size_t i = 0; i < part.size(); ++i) {
      // ObjectInUse means "deleted when the last reference goes": the deferred delete asked for.
      if (codes.codes[i] == ErrorCode::kOk || codes.codes[i] == ErrorCode::kObjectInUse) continue;
      if (failed++ == 0) {
        first_error = client_internal::ObjectError(codes.codes[i], "delete", part[i].Hex());
      }
    }
  }
  if (failed > 1) {
    return MakeError(ErrorCodeOf(first_error),
                     absl::StrCat(first_error.message(), " (and ", failed - 1, " more of ", ids.size(), " ids)"));
  }
  return first_error;
}

absl::StatusOr<EvictReply> Client::Evict(uint64_t bytes) {
  return ExpectBody<EvictReply>(connection_->Call(EvictRequest{bytes}), "evict", absl::StrCat(bytes, " bytes"));
}

absl::StatusOr<std::vector<ObjectInfo>> Client::List() {
  std::vector<ObjectInfo> out;
  std::optional<ObjectID> start_after;
  for (;;) {
    ASSIGN_OR_RETURN(ObjectsReply page,
                     ExpectBody<ObjectsReply>(connection_->Call(ListRequest{start_after, kMaxListPage}), "list"));
    // A page must move forward, or a confused store could keep us looping forever.
    if (!page.objects.empty() && start_after.has_value() && !(page.objects.front().id > *start_after)) {
      return ProtocolError("list: store returned a page that does not move forward");
    }
    out.insert(out.end(), page.objects.begin(), page.objects.end());
    if (!page.more) return out;
    if (page.objects.empty()) return ProtocolError("list: store promised more objects but sent an empty page");
    start_after = page.objects.back().id;
  }
}

absl::StatusOr<StatsReply> Client::Stats() {
  return ExpectBody<StatsReply>(connection_->Call(StatsRequest{}), "stats");
}

absl::StatusOr<std::unique_ptr<Subscription>> Client::Subscribe(bool include_existing) {
  ASSIGN_OR_RETURN(std::unique_ptr<StoreSubscription> subscription,
                   StoreSubscription::Create(options_.store_socket, options_.client_name, include_existing));
  return std::unique_ptr<Subscription>(std::move(subscription));
}

}  // namespace rplasma
