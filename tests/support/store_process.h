// StoreProcess: a real rplasma-store (RPLASMA_BIN_DIR/rplasma-store) in a fresh private temporary
// directory, for integration tests. The socket is <tmp>/store/store.sock; the store's log goes to
// <tmp>/store.log (print it with ReadLog() when a test fails). Destruction kills the store
// (SIGKILL) and removes the directory.
#ifndef RPLASMA_TESTS_SUPPORT_STORE_PROCESS_H_
#define RPLASMA_TESTS_SUPPORT_STORE_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protocol/store_messages.h"
#include "protocol/base/unique_fd.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rplasma::testing {

struct StoreProcessOptions {
  uint64_t memory = 64 << 20;           // --memory
  std::vector<std::string> extra_args;  // appended to the command line
};

class StoreProcess {
 public:
  // Starts the store and waits (at most 5 s) until its socket accepts connections (it logs so;
  // no probe connection is made, so OpenFdCount() right after Start is a clean baseline). On
  // failure the error includes the store's log.
  static absl::StatusOr<std::unique_ptr<StoreProcess>> Start(StoreProcessOptions options = {});
  ~StoreProcess();
  StoreProcess(const StoreProcess&) = delete;
  StoreProcess& operator=(const StoreProcess&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  const std::string& log_path() const { return log_path_; }
  const std::string& dir() const { return temp_.path(); }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  bool running() { return process_ && process_->running(); }

  // SIGKILL + reap.
  void Kill();
  // SIGTERM, then waits up to `timeout` for exit; returns the wait status (kills it on timeout).
  absl::StatusOr<int> Stop(absl::Duration timeout = absl::Seconds(10));
  // Stop that must end in exit status 0 (in sanitizer builds that also means no finding and no
  // leak); else an error saying how it ended. The TearDown check of the store tests.
  absl::Status StopCleanly(absl::Duration timeout = absl::Seconds(10));
  // Open fds of the store process (/proc/<pid>/fd), -1 if it cannot be read.
  int OpenFdCount() const;
  // The store's log so far.
  std::string ReadLog() const;

 private:
  StoreProcess() = default;

  TempDir temp_;
  std::string socket_path_;
  std::string log_path_;
  std::optional<Subprocess> process_;
};

// RawStoreClient: one connection speaking the store protocol directly (no client library), for
// tests of the store itself. Blocking; replies are read in arrival order.
class RawStoreClient {
 public:
  // Connects and performs the Connect exchange; the arena fd from the reply is kept.
  static absl::StatusOr<std::unique_ptr<RawStoreClient>> Connect(const std::string& socket_path,
                                                                 const std::string& name = "raw-test");
  // Connects without sending anything.
  static absl::StatusOr<std::unique_ptr<RawStoreClient>> ConnectOnly(const std::string& socket_path);

  // Sends `body` with a fresh request id (returned).
  absl::StatusOr<uint64_t> Send(RequestBody body);
  // The next reply or event (fails after `timeout`).
  absl::StatusOr<Reply> Receive(absl::Duration timeout = absl::Seconds(10));
  // Send + Receive; the reply must carry the request's id.
  absl::StatusOr<Reply> Call(RequestBody body, absl::Duration timeout = absl::Seconds(10));

  int fd() const { return fd_.get(); }
  int arena_fd() const { return arena_fd_.get(); }
  const ConnectReply& connect_reply() const { return connect_reply_; }

 private:
  RawStoreClient() = default;
  UniqueFd fd_;
  UniqueFd arena_fd_;
  ConnectReply connect_reply_;
  uint64_t next_request_id_ = 1;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_STORE_PROCESS_H_
