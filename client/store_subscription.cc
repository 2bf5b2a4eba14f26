#include "client/store_subscription.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/store_messages.h"

namespace rplasma {
namespace {

// Reads the ConnectReply frame, taking (and closing) the arena fd riding on its first byte.
absl::Status ReadConnectReply(int fd, const std::string& socket_path, absl::Duration timeout) {
  char header[kFrameHeaderBytes];
  pollfd pfd{fd, POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&pfd, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return ErrnoError("poll", socket_path, errno);
  if (rc == 0) return MakeError(ErrorCode::kDeadlineExceeded, absl::StrCat("subscribe(", socket_path, "): no answer"));
  ASSIGN_OR_RETURN(ReceivedWithFd first, RecvWithFd(fd, header, 1));
  if (first.bytes == 0) return MakeError(ErrorCode::kUnavailable, absl::StrCat("subscribe(", socket_path, "): closed"));
  RETURN_IF_ERROR(ReadAllUntil(fd, header + 1, sizeof(header) - 1, absl::Now() + timeout));
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(header, kDefaultMaxFrameBytes));
  std::string payload(length, '\0');
  RETURN_IF_ERROR(ReadAllUntil(fd, payload.data(), length, absl::Now() + timeout));
  ASSIGN_OR_RETURN(Reply reply, DecodeReply(payload));
  RETURN_IF_ERROR(reply.status());
  if (!std::holds_alternative<ConnectReply>(reply.body)) {
    return ProtocolError(absl::StrCat("subscribe(", socket_path, "): expected a ConnectReply"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<StoreSubscription>> StoreSubscription::Create(const std::string& socket_path,
                                                                             absl::string_view client_name,
                                                                             bool include_existing,
                                                                             absl::Duration timeout) {
  // A store that stopped accepting fails the subscription after the handshake timeout, as one
  // that stopped answering does.
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(socket_path, absl::Now() + timeout));
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeRequest(Request{1, ConnectRequest{std::string(client_name)}})));
  RETURN_IF_ERROR(ReadConnectReply(fd.get(), socket_path, timeout));
  RETURN_IF_ERROR(WriteFrame(fd.get(), EncodeRequest(Request{2, SubscribeRequest{include_existing}})));
  // The store acknowledges before any event: once this returns, every later seal, delete or
  // eviction is reported on this subscription.
  ASSIGN_OR_RETURN(std::string ack, ReadFrame(fd.get(), kDefaultMaxFrameBytes, absl::Now() + timeout));
  ASSIGN_OR_RETURN(Reply reply, DecodeReply(ack));
  if (reply.request_id != 2) {
    return ProtocolError(
        absl::StrCat("subscribe(", socket_path, "): expected the acknowledgement, got request ", reply.request_id));
  }
  RETURN_IF_ERROR(reply.status());
  RETURN_IF_ERROR(SetNonBlocking(fd.get()));
  return std::unique_ptr<StoreSubscription>(new StoreSubscription(std::move(fd)));
}

absl::StatusOr<ObjectEvent> StoreSubscription::Next(absl::Duration timeout) {
  if (fork_guard_.forked()) return ForkedError("subscription");
  if (!ready_.empty()) {
    ObjectEvent event = ready_.front();
    ready_.pop_front();
    return event;
  }
  if (!broken_.ok()) return broken_;
  const absl::Time deadline = timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
  for (;;) {
    absl::StatusOr<std::optional<std::string>> frame = reader_.Next();
    if (!frame.ok()) return broken_ = frame.status();
    if (frame->has_value()) {
      absl::StatusOr<Reply> reply = DecodeReply(**frame);
      if (!reply.ok()) return broken_ = reply.status();
      if (!reply->status().ok()) {
        return broken_ = MakeError(reply->error, absl::StrCat("subscribe: ", reply->error_message));
      }
      if (auto* event = std::get_if<ObjectEvent>(&reply->body)) return *event;
      if (auto* events = std::get_if<ObjectEvents>(&reply->body); events != nullptr && !events->events.empty()) {
        ready_.assign(events->events.begin() + 1, events->events.end());
        return events->events.front();
      }
      // Nothing else is expected; skip what is not an event.
      continue;
    }
    if (!read_error_.ok()) return broken_ = read_error_;
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration())
        return MakeError(ErrorCode::kDeadlineExceeded, "subscription: no event in time");
      timeout_ms = static_cast<int>(
          std::min<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), 1 << 30));
    }
    pollfd pfd{fd_.get(), POLLIN, 0};
    int rc = ::poll(&pfd, 1, timeout_ms);
    if (rc < 0 && errno != EINTR) return broken_ = ErrnoError("poll", "subscription socket", errno);
    if (rc <= 0) continue;
    absl::Status read = reader_.ReadFrom(fd_.get());
    // On EOF, events already buffered are still delivered before the error.
    if (!read.ok()) read_error_ = MakeError(ErrorCode::kUnavailable, absl::StrCat("subscription: ", read.message()));
  }
}

}  // namespace rplasma
