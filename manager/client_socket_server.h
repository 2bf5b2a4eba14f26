// ClientSocketServer: the manager's --client-socket (a Unix socket) for applications and the CLI.
// Protocol: protocol/manager_messages.h, framed (protocol/frame.h); FetchRequest -> FetchReply
// (one code + message per id), StatsRequest -> StatsReply (JSON).
//
// Who may connect (the same rules as the store's socket, store/store_server.cc): the socket's
// directory is created 0700 if missing (a warning if it is open to others), the socket is 0600,
// and every connection's SO_PEERCRED uid must be the manager's effective uid or root; others are
// closed at once, with a log line, and counted. Start refuses a path where another process answers
// ("another manager is serving <path>") and a path that is not a socket; only a stale socket (no
// one answers) is replaced.
//
// Limits: at most options.max_connections connections at once (one thread each: a Fetch blocks
// for up to its timeout); a connection over the cap is closed with a log line and counted. An idle
// connection may wait between requests for as long as it likes, but once the first byte of a
// request has arrived the whole frame must arrive within options.request_deadline, and a reply
// must be taken by the client within the same bound (SO_SNDTIMEO), or the connection is dropped.
//
// Threads: one accept thread; one thread per connection. Hand-off: a connection thread calls the
// fetch function / the stats function directly; nothing else is shared. A bad message gets an
// error reply (the connection is closed when the framing itself is broken); the server keeps
// running.
//
// Thread-safety: Start/Shutdown from one thread; stats() from any.
#ifndef RPLASMA_MANAGER_CLIENT_SOCKET_SERVER_H_
#define RPLASMA_MANAGER_CLIENT_SOCKET_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "protocol/base/counter_set.h"
#include "protocol/base/object_id.h"
#include "protocol/base/unique_fd.h"
#include "protocol/manager_messages.h"

namespace rplasma::manager {

struct ClientSocketServerOptions {
  size_t max_connections = 256;                        // concurrent connections (threads)
  absl::Duration request_deadline = absl::Seconds(5);  // a started request frame, and a reply write

  absl::Status Validate() const;
};

// The manager's stats JSON shows a snapshot as "client_socket", in this order (no metrics).
struct ClientSocketCounters : CounterSet {
  Counter dropped_stalled{this, "dropped_stalled"};          // dropped for a request or reply past the deadline
  Counter refused_credentials{this, "refused_credentials"};  // connections from another uid (not root), closed
  Counter refused_over_cap{this, "refused_over_cap"};        // connections beyond max_connections, closed
};

// A ClientSocketCounters snapshot: stats()["dropped_stalled"].
using ClientSocketStats = CounterSnapshot;

class ClientSocketServer {
 public:
  // One status per id of the request.
  using FetchFn = std::function<std::vector<absl::Status>(const ManagerFetchRequest& request)>;
  using StatsFn = std::function<ManagerStatsReply()>;

  // Listens on `path` (see above for what it refuses) and starts the accept thread.
  static absl::StatusOr<std::unique_ptr<ClientSocketServer>> Start(const std::string& path,
                                                                   const ClientSocketServerOptions& options,
                                                                   FetchFn fetch, StatsFn stats);
  ~ClientSocketServer();  // Shutdown()

  // Stops accepting, closes every connection (their threads return), joins all threads.
  void Shutdown();
  ClientSocketStats stats() const;

 private:
  ClientSocketServer(std::string path, const ClientSocketServerOptions& options, UniqueFd listener, FetchFn fetch,
                     StatsFn stats);
  void AcceptLoop();
  // Applies the credential check and the cap to a new connection; true if it may be served.
  bool Admit(int fd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Serve(int fd, std::atomic<bool>* done);
  ManagerReply Handle(const ManagerRequest& request);

  const std::string path_;
  const ClientSocketServerOptions options_;
  const uid_t uid_;  // the manager's effective uid: the one (with root) allowed to connect
  UniqueFd listener_;
  UniqueFd wake_read_, wake_write_;  // a pipe that wakes the accept loop at Shutdown
  const FetchFn fetch_;
  const StatsFn stats_;
  std::thread accept_thread_;
  ClientSocketCounters counters_;

  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_refusal_log_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  struct Connection {
    UniqueFd fd;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;  // set by the thread as it returns
  };
  // Joins and closes connections whose thread returned (bounds threads and fds).
  void ReapLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_CLIENT_SOCKET_SERVER_H_
