// TcpStreamServer / TcpStreamClient: the raw-TCP peer of the fetch benchmarks (iperf3-style,
// request/response): the client asks for N bytes with an 8-byte request, the server answers with N
// bytes from a pre-touched buffer, the client receives them straight into its destination buffer.
// One such exchange moves the same bytes as one fetch, over the same loopback, with nothing else:
// at 1 KiB it is the TCP round trip, at 64 MiB the stream bandwidth.
//
// The server serves one connection at a time on its own thread until destroyed. Sockets use
// TCP_NODELAY. A client is not thread-safe.
#ifndef RPLASMA_BENCH_MPI_COMMON_TCP_STREAM_PEER_H_
#define RPLASMA_BENCH_MPI_COMMON_TCP_STREAM_PEER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "protocol/base/unique_fd.h"

namespace rplasma::bench {

class TcpStreamServer {
 public:
  // Listens on 127.0.0.1 (a free port); serves requests up to `max_bytes` each.
  static absl::StatusOr<std::unique_ptr<TcpStreamServer>> Start(uint64_t max_bytes);
  ~TcpStreamServer();  // stops accepting, closes connections, joins the thread
  TcpStreamServer(const TcpStreamServer&) = delete;
  TcpStreamServer& operator=(const TcpStreamServer&) = delete;

  int port() const { return port_; }

 private:
  TcpStreamServer(UniqueFd listener, int port, uint64_t max_bytes);
  void Serve();

  UniqueFd listener_;
  int port_;
  std::vector<uint8_t> payload_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_fd_{-1};
  std::thread thread_;
};

class TcpStreamClient {
 public:
  static absl::StatusOr<TcpStreamClient> Connect(int port);
  // Asks for `bytes` bytes and receives them into `destination` (REQUIRES: room for them).
  absl::Status Transfer(uint8_t* destination, uint64_t bytes);

 private:
  explicit TcpStreamClient(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_TCP_STREAM_PEER_H_
