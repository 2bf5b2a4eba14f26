// TcpServerConnection: the owner side of one accepted tcp connection, served by its own thread.
//
// It is made only for a connection that already proved the secret (TcpTransport's HandshakePool
// ran the handshake without a thread); so no unauthenticated peer ever holds one.
//
// Lifecycle (on the connection thread):
//   authenticated --Start--> serving --EOF / error / malformed / Stop()--> finished
// OnConnect runs first; OnDisconnect runs exactly once, on this thread, before finished() turns true.
//
// Requests are read through a small buffer (TcpReceiveBuffer), so a small request's header and
// payload usually cost one recv(). Serving is one request at a time, in arrival order (thread per
// connection), on the thread that read it: a Call runs
// handler->HandleCall and sends the reply; a Read checks the region against the registered arena
// and handler->AllowRead, then sends header + bytes with one sendmsg straight from the arena
// mapping (no copy in user space). A refused request gets a kError reply and the connection goes
// on; a malformed message (bad header, oversize length) closes the connection. Readers pipeline
// requests, so throughput does not need a round trip per request.
//
// Thread-safety: Start/Stop/Join/finished may be called from any thread; Join once.
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_SERVER_CONNECTION_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_SERVER_CONNECTION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/transport/tcp/arena_view.h"
#include "manager/transport/tcp/tcp_receive_buffer.h"
#include "manager/transport/tcp/tcp_socket.h"
#include "manager/transport/tcp/tcp_wire.h"
#include "manager/transport/transport.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::transport::tcp {

// How long a peer may stall mid-message (or not drain our reply) before we drop it.
inline constexpr absl::Duration kPeerStallTimeout = absl::Seconds(30);

struct ServerContext {
  ArenaView arena;
  RequestHandler* handler = nullptr;
  std::shared_ptr<TransportCounters> counters;
  ConnectionOptions connection;
};

class TcpServerConnection {
 public:
  TcpServerConnection(uint64_t conn_id, UniqueFd fd, std::string peer_address, ServerContext context);
  ~TcpServerConnection();  // REQUIRES: Join() was called, or Start() never was
  TcpServerConnection(const TcpServerConnection&) = delete;
  TcpServerConnection& operator=(const TcpServerConnection&) = delete;

  void Start();
  // Asks the thread to finish (shuts the socket down); returns at once.
  void Stop();
  void Join();
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  uint64_t id() const { return conn_id_; }

 private:
  void Run();
  absl::Status Serve();
  absl::Status ServeCall(const TcpHeader& header);
  absl::Status ServeRead(const TcpHeader& header);
  // One message of `kind` whose payload is the parts, in order (gathered by one sendmsg).
  absl::Status SendReply(TcpKind kind, uint32_t status, uint64_t request_id,
                         absl::Span<const absl::string_view> payload);
  absl::Status SendError(uint64_t request_id, ErrorCode code, absl::string_view message);

  const uint64_t conn_id_;
  const UniqueFd fd_;
  const std::string peer_address_;
  const ServerContext context_;
  TcpReceiveBuffer rx_;  // the connection thread's only; a small request arrives in one recv()
  std::thread thread_;
  std::atomic<bool> finished_{false};
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_SERVER_CONNECTION_H_
