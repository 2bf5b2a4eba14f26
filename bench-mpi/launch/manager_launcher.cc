#include "bench-mpi/launch/manager_launcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::bench {
namespace {

constexpr char kReady[] = "rplasma-manager ready";

// The word after `key` on `line` (up to a space or the end); "" if `key` is not there.
std::string WordAfter(absl::string_view line, absl::string_view key) {
  size_t at = line.find(key);
  if (at == absl::string_view::npos) return "";
  at += key.size();
  const size_t end = line.find_first_of(" \n", at);
  return std::string(line.substr(at, end == absl::string_view::npos ? absl::string_view::npos : end - at));
}

}  // namespace

absl::Status ManagerLaunchOptions::Validate() const {
  if (store_socket.empty() || redis.empty() || secret_file.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "manager launch: store_socket, redis and secret_file are required");
  }
  if (start_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "manager launch: start_timeout must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ManagerCommandLine(const ManagerLaunchOptions& options,
                                                            const std::string& client_socket) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(const std::string binary, RplasmaBinary(options.binary, "rplasma-manager"));
  std::vector<std::string> argv = options.command_prefix;
  argv.insert(argv.end(), {binary, "--store_socket=" + options.store_socket, "--redis=" + options.redis});
  if (!options.listen_host.empty()) argv.push_back("--listen=" + options.listen_host + ":0");
  argv.push_back("--client_socket=" + client_socket);
  argv.push_back("--secret_file=" + options.secret_file);
  if (!options.node_name.empty()) argv.push_back("--node_name=" + options.node_name);
  if (!options.transport.empty()) argv.push_back("--transport=" + options.transport);
  if (!options.pin_threshold.empty()) argv.push_back("--pin_threshold=" + options.pin_threshold);
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  return argv;
}

absl::StatusOr<std::unique_ptr<LaunchedManager>> LaunchedManager::Start(const ManagerLaunchOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<LaunchedManager> manager(new LaunchedManager());
  if (options.client_socket.empty() || options.log_path.empty()) {
    ASSIGN_OR_RETURN(manager->dir_, ScratchDir::Create("rplasma-bench-manager"));
  }
  manager->client_socket_ = options.client_socket.empty() ? manager->dir_.Join("manager.sock") : options.client_socket;
  manager->log_path_ = options.log_path.empty() ? manager->dir_.Join("manager.log") : options.log_path;
  ASSIGN_OR_RETURN(std::vector<std::string> argv, ManagerCommandLine(options, manager->client_socket_));
  // The log may hold earlier runs (a restart on the same log): only what this one writes counts.
  const size_t log_start = ReadWholeFile(manager->log_path_).size();
  ASSIGN_OR_RETURN(manager->process_, ChildProcess::Start(argv, SpawnOptions{.log_path = manager->log_path_,
                                                                             .stop_grace = options.stop_grace}));

  const absl::Time deadline = absl::Now() + options.start_timeout;
  for (;;) {
    // Ready once the whole ready line is there ("... ready node=ID ... listen=HOST:PORT ...").
    const std::string log = ReadWholeFile(manager->log_path_);
    const size_t at = log.find(kReady, log_start);
    const size_t end = at == std::string::npos ? std::string::npos : log.find('\n', at);
    if (end != std::string::npos && (!options.probe_client_socket || UnixConnect(manager->client_socket_).ok())) {
      const absl::string_view line(log.data() + at, end - at);
      manager->node_id_ = WordAfter(line, "node=");
      manager->listen_address_ = WordAfter(line, "listen=");
      return manager;
    }
    if (!manager->process_.running()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrFormat("rplasma-manager (%s) exited at start; log:\n%s",
                                                                options.node_name, FileTail(manager->log_path_)));
    }
    if (absl::Now() > deadline) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("rplasma-manager (%s) not ready within %s; log:\n%s", options.node_name,
                                       absl::FormatDuration(options.start_timeout), FileTail(manager->log_path_)));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
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
