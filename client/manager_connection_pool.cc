#include "client/manager_connection_pool.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/mutex_lock.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma {

absl::StatusOr<ManagerConnectionPool::Lease> ManagerConnectionPool::Take(absl::Time deadline) {
  if (fork_guard_.forked()) return ForkedError("manager connection");
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      Lease lease{std::move(idle_.back()), true};
      idle_.pop_back();
      return lease;
    }
  }
  absl::StatusOr<UniqueFd> fd = UnixConnect(socket_path_, deadline);
  if (!fd.ok()) {
    const ErrorCode code = ErrorCodeOf(fd.status()) == ErrorCode::kDeadlineExceeded ? ErrorCode::kDeadlineExceeded
                                                                                    : ErrorCode::kUnavailable;
    return MakeError(code, absl::StrCat("fetch: manager at ", socket_path_, ": ", fd.status().message()));
  }
  return Lease{*std::move(fd), false};
}

void ManagerConnectionPool::GiveBack(UniqueFd fd) {
  MutexLock lock(&mu_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(fd));
  // else: `fd` closes here
}

void ManagerConnectionPool::Clear() {
  std::vector<UniqueFd> closing;
  MutexLock lock(&mu_);
  closing.swap(idle_);
}

size_t ManagerConnectionPool::idle() const {
  MutexLock lock(&mu_);
  return idle_.size();
}

}  // namespace rplasma
