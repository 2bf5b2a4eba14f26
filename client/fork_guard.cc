#include "client/fork_guard.h"

#include <pthread.h>

#include <atomic>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma {
namespace {

std::atomic<uint64_t> fork_count{0};

void CountFork() { fork_count.fetch_add(1, std::memory_order_relaxed); }

uint64_t Registered() {
  static const bool registered = pthread_atfork(nullptr, nullptr, &CountFork) == 0;
  (void)registered;
  return fork_count.load(std::memory_order_relaxed);
}

}  // namespace

ForkGuard::ForkGuard() : generation_(Registered()) {}

bool ForkGuard::forked() const { return fork_count.load(std::memory_order_relaxed) != generation_; }

absl::Status ForkedError(const char* what) {
  return MakeError(ErrorCode::kInvalidArgument,
                   absl::StrCat(what,
                                ": used in a child process after fork(); it belongs to the parent (its "
                                "connection and slots are the parent's). Connect a new client in the child"));
}

}  // namespace rplasma
