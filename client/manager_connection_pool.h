// ManagerConnectionPool: a client's idle connections to the local rplasma-manager's client
// socket, reused across Fetch calls so that a small fetch costs one request/reply exchange, not a
// connect plus a server thread started for it.
//
// A caller takes a connection (an idle one, else a fresh connect), uses it for one exchange, and
// gives it back only if the exchange ended cleanly; a connection that saw any error is closed.
// At most `max_idle` connections are kept; concurrent callers each hold their own.
//
// Thread-safety: all methods are thread-safe.
#ifndef RPLASMA_CLIENT_MANAGER_CONNECTION_POOL_H_
#define RPLASMA_CLIENT_MANAGER_CONNECTION_POOL_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "client/fork_guard.h"
#include "protocol/base/unique_fd.h"

namespace rplasma {

class ManagerConnectionPool {
 public:
  struct Lease {
    UniqueFd fd;
    bool reused = false;  // came from the idle list (the manager may have closed it meanwhile)
  };

  ManagerConnectionPool(std::string socket_path, size_t max_idle)
      : socket_path_(std::move(socket_path)), max_idle_(max_idle) {}

  // An idle connection, or a new one. kUnavailable if the manager cannot be reached;
  // kDeadlineExceeded if its listener's backlog stays full until `deadline` (a manager that stopped
  // accepting never holds a caller past it).
  absl::StatusOr<Lease> Take(absl::Time deadline);
  // Returns a connection whose last exchange completed (request sent, whole reply read).
  void GiveBack(UniqueFd fd);
  // Closes the idle connections (e.g. after the manager restarted).
  void Clear();

  size_t idle() const;

 private:
  const std::string socket_path_;
  const size_t max_idle_;
  const ForkGuard fork_guard_;  // a forked child must not talk on the parent's connections
  mutable absl::Mutex mu_;
  std::vector<UniqueFd> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_MANAGER_CONNECTION_POOL_H_
