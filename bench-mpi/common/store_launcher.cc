#include "bench-mpi/common/store_launcher.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_format.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma::bench {

absl::Status StoreLaunchOptions::Validate() const {
  if (memory_bytes < (1u << 20)) {
    return MakeError(ErrorCode::kInvalidArgument, "store memory must be at least 1 MiB");
  }
  if (start_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "store start_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LaunchedStore>> LaunchedStore::Start(const StoreLaunchOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::string binary = options.binary;
  if (binary.empty()) {
    ASSIGN_OR_RETURN(std::string dir, ExecutableDir());
    binary = dir + "/rplasma-store";
  }
  if (::access(binary.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("rplasma-store not found at %s", binary));
  }
  std::unique_ptr<LaunchedStore> store(new LaunchedStore());
  ASSIGN_OR_RETURN(store->dir_, ScratchDir::Create("rplasma-bench-store"));
  store->socket_path_ = store->dir_.Join("store.sock");
  store->log_path_ = store->dir_.Join("store.log");
  std::vector<std::string> argv = {binary, "--socket", store->socket_path_, "--memory",
                                   std::to_string(options.memory_bytes)};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  ASSIGN_OR_RETURN(store->process_, ChildProcess::Spawn(argv, store->log_path_));

  absl::Time deadline = absl::Now() + options.start_timeout;
  while (absl::Now() < deadline) {
    if (!store->process_.Running()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrFormat("rplasma-store exited at start; log:\n%s",
                                                                FileTail(store->log_path_)));
    }
    if (::access(store->socket_path_.c_str(), F_OK) == 0 && UnixConnect(store->socket_path_).ok()) {
      return store;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("rplasma-store did not listen on %s within %s; log:\n%s", store->socket_path_,
                                   absl::FormatDuration(options.start_timeout), FileTail(store->log_path_)));
}

absl::StatusOr<pid_t> UnixSocketPeerPid(const std::string& path) {
  ASSIGN_OR_RETURN(UniqueFd fd, UnixConnect(path));
  ASSIGN_OR_RETURN(PeerCredentials credentials, GetPeerCredentials(fd.get()));
  return credentials.pid;
}

}  // namespace rplasma::bench
