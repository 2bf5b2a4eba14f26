#include "bench-mpi/launch/manager_launcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::bench {

absl::Status ManagerLaunchOptions::Validate() const {
  if (store_socket.empty() || redis.empty() || secret_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "manager launch: store_socket, redis and secret_file are required");
  }
  if (start_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "manager launch: start_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LaunchedManager>> LaunchedManager::Start(const ManagerLaunchOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::string binary = options.binary;
  if (binary.empty()) {
    ASSIGN_OR_RETURN(std::string dir, ExecutableDir());
    binary = dir + "/rplasma-manager";
  }
  if (::access(binary.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("rplasma-manager not found at %s", binary));
  }
  std::unique_ptr<LaunchedManager> manager(new LaunchedManager());
  ASSIGN_OR_RETURN(manager->dir_, ScratchDir::Create("rplasma-bench-manager"));
  manager->client_socket_ = manager->dir_.Join("manager.sock");
  manager->log_path_ = manager->dir_.Join("manager.log");
  std::vector<std::string> argv = {binary,
                                   "--store_socket", options.store_socket,
                                   "--redis", options.redis,
                                   "--listen", options.listen_host + ":0",
                                   "--client_socket", manager->client_socket_,
                                   "--secret_file", options.secret_file,
                                   "--transport", options.transport,
                                   "--pin_threshold", options.pin_threshold,
                                   "--node_name", options.node_name};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  // Destruction lets the manager shut down (SIGTERM) before it is killed.
  ASSIGN_OR_RETURN(manager->process_,
                   ChildProcess::Start(argv, SpawnOptions{.log_path = manager->log_path_, .stop_grace = absl::Seconds(3)}));

  absl::Time deadline = absl::Now() + options.start_timeout;
  while (absl::Now() < deadline) {
    if (!manager->process_.running()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrFormat("rplasma-manager exited at start; log:\n%s",
                                                                FileTail(manager->log_path_)));
    }
    if (absl::StrContains(FileTail(manager->log_path_, 1 << 16), "rplasma-manager ready") &&
        UnixConnect(manager->client_socket_).ok()) {
      return manager;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("rplasma-manager not ready within %s; log:\n%s",
                                   absl::FormatDuration(options.start_timeout), FileTail(manager->log_path_)));
}

absl::Status WriteRandomSecret(const std::string& path) {
  std::random_device random;
  std::string bytes(32, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  const std::string secret = absl::BytesToHexString(bytes) + "\n";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError("open", path, errno);
  return WriteAll(fd.get(), secret.data(), secret.size());
}

}  // namespace rplasma::bench
