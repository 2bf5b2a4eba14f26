// MetricsHttpServer: a minimal HTTP/1.x endpoint on its own thread that answers GET /metrics
// with a text exposition (protocol/metrics/prometheus_text.h) rendered on demand.
//
// Built to sit next to a daemon's real work without ever holding it up:
//   - one thread, one connection at a time; others wait in the kernel's accept backlog (small);
//   - each connection gets options.request_deadline in total to send its request line and to
//     take the reply: a client that stalls, trickles or never reads is closed at the deadline;
//   - a request head over options.max_request_bytes, a method other than GET/HEAD, or another
//     path is answered 400/405/404 and closed; nothing the client sends is trusted or kept;
//   - `render` runs on this thread: it must be thread-safe and must not wait on the daemon's
//     event loop (read atomics or a published snapshot).
// Every reply is "Connection: close". The listening address is 127.0.0.1 unless told otherwise.
//
// Thread-safety: Start/Shutdown/destructor from one thread; the accessors from any.
#ifndef RPLASMA_PROTOCOL_METRICS_METRICS_HTTP_SERVER_H_
#define RPLASMA_PROTOCOL_METRICS_METRICS_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "protocol/base/counter_set.h"
#include "protocol/base/unique_fd.h"

namespace rplasma {

struct MetricsHttpServerOptions {
  std::string address = "127.0.0.1";  // a numeric IPv4 or IPv6 address to bind
  uint16_t port = 0;                  // 0: an ephemeral port (see port())
  absl::Duration request_deadline = absl::Seconds(1);
  size_t max_request_bytes = 8192;
  int backlog = 8;
};

class MetricsHttpServer {
 public:
  using RenderFn = std::function<std::string()>;

  // Binds and listens, then starts the serving thread.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const MetricsHttpServerOptions& options,
                                                                  RenderFn render);
  ~MetricsHttpServer();  // Shutdown()
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Stops serving (a connection in progress is cut at once) and joins the thread. Idempotent.
  void Shutdown();

  uint16_t port() const { return port_; }
  uint64_t scrapes() const { return scrapes_.load(); }      // 200 replies
  uint64_t rejected() const { return rejected_.load(); }    // 4xx replies
  uint64_t timed_out() const { return timed_out_.load(); }  // cut at the deadline

 private:
  MetricsHttpServer(MetricsHttpServerOptions options, RenderFn render, UniqueFd listen_fd, UniqueFd wake_fd,
                    uint16_t port);
  void Serve();
  // One accepted connection, start to close.
  void HandleConnection(int fd);
  // Waits until `fd` is ready for `events` or the wake fd fires; false at the deadline or on stop.
  bool WaitReady(int fd, short events, absl::Time deadline);

  const MetricsHttpServerOptions options_;
  const RenderFn render_;
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // an eventfd: Shutdown's signal to the thread
  const uint16_t port_;
  CounterSet counters_;  // read through the accessors above; not in any exposition
  Counter scrapes_{&counters_, "scrapes"};
  Counter rejected_{&counters_, "rejected"};
  Counter timed_out_{&counters_, "timed_out"};
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_METRICS_METRICS_HTTP_SERVER_H_
