#include "absl/strings/cord.h"

#include "client/cli/cli_format.h"
#include "client/cli/command.h"
#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

constexpr char kUsagePayload[] = "rplasma/cli-usage";

}  // namespace

absl::StatusOr<Client*> CliContext::client() {
  if (client_ == nullptr) {
    ASSIGN_OR_RETURN(client_, Client::Connect(options_));
  }
  return client_.get();
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = MakeError(ErrorCode::kInvalidArgument, message);
  status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) { return status.GetPayload(kUsagePayload).has_value(); }

absl::StatusOr<ObjectID> TakeObjectId(absl::Span<const std::string>& args) {
  if (args.empty()) return UsageError("missing object id");
  if (args[0] == "--label") {
    if (args.size() < 2) return UsageError("--label needs a text");
    ObjectID id = ObjectID::FromLabel(args[1]);
    args.remove_prefix(2);
    return id;
  }
  absl::StatusOr<ObjectID> id = ParseObjectId(args[0]);
  if (!id.ok()) return UsageError(id.status().message());
  args.remove_prefix(1);
  return id;
}

std::vector<Command> AllCommands() {
  std::vector<Command> all = ObjectCommands();
  for (const Command& c : StoreCommands()) all.push_back(c);
  for (const Command& c : FetchCommands()) all.push_back(c);
  return all;
}

}  // namespace rplasma::cli
