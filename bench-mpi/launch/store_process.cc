#include "bench-mpi/launch/store_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench-mpi/launch/process_fds.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::bench {

absl::Status StoreProcessOptions::Validate() const {
  if (memory < (1u << 20)) return MakeError(ErrorCode::kInvalidArgument, "store memory must be at least 1 MiB");
  if (start_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "store start_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StoreProcess>> StoreProcess::Start(const StoreProcessOptions& options) {
  std::unique_ptr<StoreProcess> store(new StoreProcess());
  RETURN_IF_ERROR(store->Launch(options));
  return store;
}

absl::Status StoreProcess::Launch(const StoreProcessOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(const std::string binary, RplasmaBinary(options.binary, "rplasma-store"));
  ASSIGN_OR_RETURN(dir_, ScratchDir::Create("rplasma-store"));
  socket_path_ = dir_.Join("store/store.sock");
  log_path_ = dir_.Join("store.log");
  std::vector<std::string> argv = {binary, "--socket", socket_path_, "--memory", absl::StrCat(options.memory)};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  ASSIGN_OR_RETURN(process_, ChildProcess::Start(argv, log_path_));

  const char* level = std::getenv("RPLASMA_LOG_LEVEL");
  const bool quiet = level != nullptr && std::atoi(level) > 0;
  const absl::Time deadline = absl::Now() + options.start_timeout;
  for (;;) {
    // Ready once it logged that it listens (after bind, listen and chmod). Not probed with a
    // connection: the store would still be closing it when a test measures its fd baseline.
    if (ReadLog().find(": listening on ") != std::string::npos) return absl::OkStatus();
    // With INFO logs turned off (RPLASMA_LOG_LEVEL > 0) there is no such line: probe instead.
    if (quiet && UnixConnect(socket_path_).ok()) return absl::OkStatus();
    if (!process_.running()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrCat("rplasma-store exited at start; log:\n", ReadLog()));
    }
    if (absl::Now() > deadline) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       absl::StrCat("rplasma-store did not listen on ", socket_path_, " within ",
                                    absl::FormatDuration(options.start_timeout), "; log:\n", ReadLog()));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
}

absl::StatusOr<int> StoreProcess::Stop(absl::Duration timeout) {
  if (pid() < 0 && !process_.Wait(absl::ZeroDuration())) {
    return MakeError(ErrorCode::kInternal, "rplasma-store was never started");
  }
  std::optional<int> status = process_.Stop(timeout);
  if (!status) return MakeError(ErrorCode::kDeadlineExceeded, "rplasma-store did not exit after SIGTERM");
  return *status;
}

absl::Status StoreProcess::StopCleanly(absl::Duration timeout) {
  ASSIGN_OR_RETURN(int status, Stop(timeout));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return MakeError(ErrorCode::kInternal, absl::StrCat("rplasma-store did not exit cleanly: wait status ", status));
}

int StoreProcess::OpenFdCount() const { return CountOpenFds(pid()); }

absl::StatusOr<pid_t> UnixSocketPeerPid(const std::string& path) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(path));
  ASSIGN_OR_RETURN(PeerCredentials credentials, GetPeerCredentials(fd.get()));
  return credentials.pid;
}

}  // namespace rplasma::bench
