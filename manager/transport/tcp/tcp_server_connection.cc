#include "manager/transport/tcp/tcp_server_connection.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

#include "manager/transport/tcp/tcp_socket.h"
#include "protocol/base/logging.h"

namespace rplasma::transport::tcp {

TcpServerConnection::TcpServerConnection(uint64_t conn_id, UniqueFd fd, std::string peer_address, ServerContext context)
    : conn_id_(conn_id), fd_(std::move(fd)), peer_address_(std::move(peer_address)), context_(std::move(context)) {}

TcpServerConnection::~TcpServerConnection() { CHECK(!thread_.joinable()) << "TcpServerConnection not joined"; }

void TcpServerConnection::Start() {
  thread_ = std::thread([this] { Run(); });
}

void TcpServerConnection::Stop() { ::shutdown(fd_.get(), SHUT_RDWR); }

void TcpServerConnection::Join() {
  if (thread_.joinable()) thread_.join();
}

void TcpServerConnection::Run() {
  TransportCounters& counters = *context_.counters;
  absl::Status configured = ConfigureConnection(fd_.get(), context_.connection);
  if (!configured.ok()) LOG(WARNING) << "tcp transport: configuring " << peer_address_ << ": " << configured.message();
  counters.connections.fetch_add(1, std::memory_order_relaxed);
  context_.handler->OnConnect(conn_id_, peer_address_);
  absl::Status end = Serve();
  if (ErrorCodeOf(end) == ErrorCode::kProtocolError) {
    counters.errors.fetch_add(1);
    LOG(WARNING) << "tcp transport: closing connection " << conn_id_ << " from " << peer_address_ << ": "
                 << end.message();
  }
  ::shutdown(fd_.get(), SHUT_RDWR);
  counters.connections.fetch_sub(1, std::memory_order_relaxed);
  context_.handler->OnDisconnect(conn_id_);
  finished_.store(true, std::memory_order_release);
}

absl::Status TcpServerConnection::Serve() {
  while (true) {
    uint8_t encoded[kTcpHeaderBytes];
    // Idle between requests may last forever; keepalive/TCP_USER_TIMEOUT catch a vanished peer.
    RETURN_IF_ERROR(rx_.ReadExact(fd_.get(), encoded, sizeof(encoded), absl::InfiniteFuture()));
    ASSIGN_OR_RETURN(TcpHeader header, ParseTcpHeader(encoded, TcpDirection::kRequest));
    context_.counters->rx_messages.fetch_add(1);
    context_.counters->rx_bytes.fetch_add(kTcpHeaderBytes + header.length);
    if (header.kind == TcpKind::kCall) {
      RETURN_IF_ERROR(ServeCall(header));
    } else {
      RETURN_IF_ERROR(ServeRead(header));
    }
  }
}

absl::Status TcpServerConnection::ServeCall(const TcpHeader& header) {
  std::string request(header.length, '\0');  // length already capped at kMaxCallBytes
  RETURN_IF_ERROR(rx_.ReadExact(fd_.get(), request.data(), request.size(), absl::InfiniteFuture(), kPeerStallTimeout));
  const CallReply reply = context_.handler->HandleCall(conn_id_, request);
  const size_t size = reply.size();
  if (size > kMaxCallBytes) {
    LOG(ERROR) << "tcp transport: HandleCall produced " << size << " bytes (> kMaxCallBytes)";
    return SendError(header.request_id, ErrorCode::kInternal, "reply exceeds kMaxCallBytes");
  }
  // The head, then the tail's bytes straight from where they live (the arena): one sendmsg.
  return SendReply(TcpKind::kCallReply, 0, header.request_id, reply.Parts());
}

absl::Status TcpServerConnection::ServeRead(const TcpHeader& header) {
  uint8_t request[kReadRequestBytes];
  RETURN_IF_ERROR(rx_.ReadExact(fd_.get(), request, sizeof(request), absl::InfiniteFuture(), kPeerStallTimeout));
  RemoteRegion region;
  DecodeReadRequest(request, &region.addr, &region.length);
  if (!context_.arena.ContainsRange(region.addr, region.length)) {
    return SendError(header.request_id, ErrorCode::kInvalidArgument,
                     absl::StrCat("read of [", region.addr, ", +", region.length, ") is outside the arena"));
  }
  if (!context_.handler->AllowRead(conn_id_, region)) {
    return SendError(header.request_id, ErrorCode::kPermissionDenied,
                     absl::StrCat("read of [", region.addr, ", +", region.length,
                                  ") is not inside a live lease of this connection"));
  }
  // Straight from the arena mapping into the socket.
  const absl::string_view bytes(reinterpret_cast<const char*>(context_.arena.base + region.addr), region.length);
  return SendReply(TcpKind::kReadData, 0, header.request_id, {bytes});
}

absl::Status TcpServerConnection::SendReply(TcpKind kind, uint32_t status, uint64_t request_id,
                                            absl::Span<const absl::string_view> payload) {
  size_t bytes = 0;
  for (absl::string_view part : payload) bytes += part.size();
  TcpHeader header;
  header.kind = kind;
  header.status = status;
  header.request_id = request_id;
  header.length = bytes;
  uint8_t encoded[kTcpHeaderBytes];
  EncodeTcpHeader(header, encoded);
  absl::InlinedVector<iovec, 8> iov;
  iov.reserve(1 + payload.size());
  iov.push_back({encoded, kTcpHeaderBytes});
  for (absl::string_view part : payload) iov.push_back({const_cast<char*>(part.data()), part.size()});
  RETURN_IF_ERROR(
      SendAll(fd_.get(), iov.data(), static_cast<int>(iov.size()), absl::InfiniteFuture(), kPeerStallTimeout));
  context_.counters->tx_messages.fetch_add(1);
  context_.counters->tx_bytes.fetch_add(kTcpHeaderBytes + bytes);
  return absl::OkStatus();
}

absl::Status TcpServerConnection::SendError(uint64_t request_id, ErrorCode code, absl::string_view message) {
  absl::string_view text = message.substr(0, kMaxErrorBytes);
  return SendReply(TcpKind::kError, static_cast<uint32_t>(code), request_id, {text});
}

}  // namespace rplasma::transport::tcp
