// StoreProcess: bench-mpi/launch's StoreProcess (the one store launcher) with the tests' defaults:
// the binary RPLASMA_BIN_DIR/rplasma-store and a 64 MiB arena. The socket is <dir>/store/store.sock;
// the store's log is <dir>/store.log (print it with ReadLog() when a test fails). Destruction kills
// the store (SIGKILL) and removes the directory.
#ifndef RPLASMA_TESTS_SUPPORT_STORE_PROCESS_H_
#define RPLASMA_TESTS_SUPPORT_STORE_PROCESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "bench-mpi/launch/store_process.h"
#include "protocol/base/unique_fd.h"
#include "protocol/store_messages.h"
#include "tests/support/wait_for.h"  // WaitFor, which the store tests use with it

namespace rplasma::testing {

struct StoreProcessOptions {
  uint64_t memory = 64 << 20;           // --memory
  std::vector<std::string> extra_args;  // appended to the command line
};

class StoreProcess : public bench::StoreProcess {
 public:
  // Starts the store and waits until it listens (see bench::StoreProcess). On failure the error
  // includes the store's log.
  static absl::StatusOr<std::unique_ptr<StoreProcess>> Start(StoreProcessOptions options = {});

 private:
  StoreProcess() = default;
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
  // On a subscribed connection: the next `count` events, unpacked from ObjectEvent and
  // ObjectEvents frames (an error if anything else arrives or a frame holds more than asked for).
  absl::StatusOr<std::vector<ObjectEvent>> ReceiveEvents(size_t count, absl::Duration timeout = absl::Seconds(10));

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
