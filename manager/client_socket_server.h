// ClientSocketServer: the manager's --client-socket (a Unix socket) for applications and the CLI.
// Protocol: protocol/manager_messages.h, framed (protocol/frame.h); FetchRequest -> FetchReply
// (one code + message per id), StatsRequest -> StatsReply (JSON).
//
// Threads: one accept thread; one thread per connection (clients are few and a Fetch blocks for
// up to its timeout). Hand-off: a connection thread calls FetchEngine::Fetch / the stats function
// directly; nothing else is shared. A bad frame or message gets an error reply (or the connection
// is closed when the framing itself is broken); the server keeps running.
//
// Thread-safety: Start/Shutdown from one thread.
#ifndef RPLASMA_MANAGER_CLIENT_SOCKET_SERVER_H_
#define RPLASMA_MANAGER_CLIENT_SOCKET_SERVER_H_

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "manager/fetch/fetch_engine.h"
#include "protocol/manager_messages.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::manager {

class ClientSocketServer {
 public:
  using StatsFn = std::function<std::string()>;

  // Listens on `path` (a stale socket file is replaced) and starts the accept thread.
  static absl::StatusOr<std::unique_ptr<ClientSocketServer>> Start(const std::string& path, fetch::FetchEngine* engine,
                                                                   StatsFn stats);
  ~ClientSocketServer();  // Shutdown()

  // Stops accepting, closes every connection (their threads return), joins all threads.
  void Shutdown();

 private:
  ClientSocketServer(std::string path, UniqueFd listener, fetch::FetchEngine* engine, StatsFn stats);
  void AcceptLoop();
  void Serve(int fd, std::atomic<bool>* done);
  ManagerReply Handle(const ManagerRequest& request);

  const std::string path_;
  UniqueFd listener_;
  UniqueFd wake_read_, wake_write_;  // a pipe that wakes the accept loop at Shutdown
  fetch::FetchEngine* const engine_;
  const StatsFn stats_;
  std::thread accept_thread_;

  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
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
