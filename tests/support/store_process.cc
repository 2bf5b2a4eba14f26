#include "tests/support/store_process.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/frame.h"

namespace rplasma::testing {

absl::StatusOr<std::unique_ptr<StoreProcess>> StoreProcess::Start(StoreProcessOptions options) {
  std::unique_ptr<StoreProcess> store(new StoreProcess());
  bench::StoreProcessOptions launch;
  launch.binary = std::string(RPLASMA_BIN_DIR) + "/rplasma-store";
  launch.memory = options.memory;
  launch.extra_args = std::move(options.extra_args);
  RETURN_IF_ERROR(store->Launch(launch));
  return store;
}

absl::StatusOr<std::unique_ptr<RawStoreClient>> RawStoreClient::ConnectOnly(const std::string& socket_path) {
  std::unique_ptr<RawStoreClient> c(new RawStoreClient());
  ASSIGN_OR_RETURN(c->fd_, UnixConnect(socket_path));
  return c;
}

absl::StatusOr<std::unique_ptr<RawStoreClient>> RawStoreClient::Connect(const std::string& socket_path,
                                                                        const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<RawStoreClient> c, ConnectOnly(socket_path));
  ASSIGN_OR_RETURN(uint64_t rid, c->Send(ConnectRequest{name}));
  // The arena fd rides on the first byte of the reply frame.
  char header[kFrameHeaderBytes];
  ASSIGN_OR_RETURN(ReceivedWithFd first, RecvWithFd(c->fd_.get(), header, sizeof(header)));
  if (first.bytes == 0) return MakeError(ErrorCode::kUnavailable, "connect: store closed the connection");
  if (!first.fd) return ProtocolError("connect: reply carried no arena fd");
  c->arena_fd_ = std::move(first.fd);
  RETURN_IF_ERROR(ReadAll(c->fd_.get(), header + first.bytes, sizeof(header) - first.bytes));
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(header, kDefaultMaxFrameBytes));
  std::string payload(length, '\0');
  RETURN_IF_ERROR(ReadAll(c->fd_.get(), payload.data(), length));
  ASSIGN_OR_RETURN(Reply reply, DecodeReply(payload));
  RETURN_IF_ERROR(reply.status());
  if (reply.request_id != rid) return ProtocolError("connect: reply for another request");
  auto* connect = std::get_if<ConnectReply>(&reply.body);
  if (connect == nullptr) return ProtocolError("connect: reply is not a ConnectReply");
  c->connect_reply_ = *connect;
  return c;
}

absl::StatusOr<uint64_t> RawStoreClient::Send(RequestBody body) {
  Request request{next_request_id_++, std::move(body)};
  RETURN_IF_ERROR(WriteFrame(fd_.get(), EncodeRequest(request)));
  return request.request_id;
}

absl::StatusOr<Reply> RawStoreClient::Receive(absl::Duration timeout) {
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd_.get(), kDefaultMaxFrameBytes, absl::Now() + timeout));
  return DecodeReply(payload);
}

absl::StatusOr<Reply> RawStoreClient::Call(RequestBody body, absl::Duration timeout) {
  ASSIGN_OR_RETURN(uint64_t rid, Send(std::move(body)));
  ASSIGN_OR_RETURN(Reply reply, Receive(timeout));
  if (reply.request_id != rid) {
    return ProtocolError(absl::StrCat("reply for request ", reply.request_id, ", expected ", rid));
  }
  return reply;
}

absl::StatusOr<std::vector<ObjectEvent>> RawStoreClient::ReceiveEvents(size_t count, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<ObjectEvent> events;
  while (events.size() < count) {
    ASSIGN_OR_RETURN(Reply reply, Receive(deadline - absl::Now()));
    RETURN_IF_ERROR(reply.status());
    if (reply.request_id != 0) return ProtocolError(absl::StrCat("expected events, got reply ", reply.request_id));
    if (const auto* one = std::get_if<ObjectEvent>(&reply.body)) {
      events.push_back(*one);
    } else if (const auto* many = std::get_if<ObjectEvents>(&reply.body)) {
      events.insert(events.end(), many->events.begin(), many->events.end());
    } else {
      return ProtocolError("expected an ObjectEvent or ObjectEvents frame");
    }
  }
  if (events.size() > count)
    return ProtocolError(absl::StrCat(events.size(), " events arrived, ", count, " asked for"));
  return events;
}

}  // namespace rplasma::testing
