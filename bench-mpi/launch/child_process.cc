#include "bench-mpi/launch/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "protocol/base/logging.h"
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

extern char** environ;

namespace rplasma::bench {

namespace {

// The child's side of Start, between vfork and execve. It shares the parent's memory and the
// parent is suspended, so it only makes system calls on what the parent prepared; on failure it
// writes errno to `report_fd` (close-on-exec: an exec that succeeds closes it) and exits 127.
// `log_path` null = keep stdout and stderr; `death_signal` 0 = none.
[[noreturn]] void ExecChild(const char* path, char* const* args, char* const* envp, const char* log_path,
                            int death_signal, pid_t parent, const sigset_t& mask, int report_fd) {
  int err = 0;
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int log = log_path != nullptr ? ::open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
  if (null < 0 || ::dup2(null, STDIN_FILENO) < 0) {
    err = errno;
  } else if (log_path != nullptr && (log < 0 || ::dup2(log, STDOUT_FILENO) < 0 || ::dup2(log, STDERR_FILENO) < 0)) {
    err = errno;
  } else if (death_signal != 0 && ::prctl(PR_SET_PDEATHSIG, death_signal) != 0) {
    err = errno;
  } else if (death_signal != 0 && ::getppid() != parent) {
    // The parent died before prctl took effect: no signal will come, so do not start at all.
    err = ESRCH;
  } else {
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    ::execve(path, args, envp);
    err = errno;
  }
  (void)!::write(report_fd, &err, sizeof(err));
  ::_exit(127);
}

// This process's environment with `overrides` (NAME=VALUE) added or replacing.
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const absl::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& o : overrides) {
      if (absl::string_view(o).substr(0, o.find('=')) == name) replaced = true;
    }
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

std::vector<char*> NullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

absl::StatusOr<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv, const std::string& log_path) {
  SpawnOptions options;
  options.log_path = log_path;
  return Start(argv, options);
}

absl::StatusOr<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return MakeError(ErrorCode::kInvalidArgument, "spawn: empty argv");
  for (const std::string& e : options.env) {
    if (e.find('=') == std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("spawn ", argv[0], ": env entry without '=': ", e));
    }
  }
  std::vector<char*> args = NullTerminated(argv);
  const std::vector<std::string> env_strings = MergedEnvironment(options.env);
  std::vector<char*> envp = NullTerminated(env_strings);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return ErrnoError("pipe2", "spawn report", errno);
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  // vfork (as posix_spawn does internally): no page tables are copied, so this is safe in a
  // process with registered memory, and the parent waits until the child has exec'd. Signals
  // stay blocked until the exec, so no handler of ours runs on the child's borrowed stack.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t parent = ::getpid();
  const pid_t pid = ::vfork();
  if (pid == 0) {
    ExecChild(argv[0].c_str(), args.data(), envp.data(), options.log_path.empty() ? nullptr : options.log_path.c_str(),
              options.death_signal, parent, old, report_write.get());
  }
  const int vfork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return ErrnoError("vfork", argv[0], vfork_errno);
  report_write = UniqueFd();
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(report_read.get(), &child_errno, sizeof(child_errno))) < 0 && errno == EINTR) {
  }
  if (n == 0) return ChildProcess(pid, options.stop_grace);  // exec'd: the report pipe closed unwritten
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return ErrnoError("spawn", argv[0], n == static_cast<ssize_t>(sizeof(child_errno)) ? child_errno : EIO);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      wait_status_(std::exchange(other.wait_status_, std::nullopt)),
      stop_grace_(other.stop_grace_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (running()) Stop(stop_grace_);
    pid_ = std::exchange(other.pid_, -1);
    wait_status_ = std::exchange(other.wait_status_, std::nullopt);
    stop_grace_ = other.stop_grace_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (running()) Stop(stop_grace_);
}

void ChildProcess::Reaped(int status) {
  pid_ = -1;
  wait_status_ = status;
}

bool ChildProcess::running() {
  if (pid_ < 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return true;
  if (r == pid_) {
    Reaped(status);
  } else {
    pid_ = -1;  // not our child any more: nothing to reap
  }
  return false;
}

void ChildProcess::Signal(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
}

std::optional<int> ChildProcess::Wait(absl::Duration timeout) {
  if (pid_ < 0) return wait_status_;
  if (timeout == absl::InfiniteDuration()) {
    int status = 0;
    pid_t r;
    while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (r == pid_) {
      Reaped(status);
    } else {
      pid_ = -1;
    }
    return wait_status_;
  }
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    if (!running()) return wait_status_;
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(2));
  }
}

void ChildProcess::Kill() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  Wait();
}

std::optional<int> ChildProcess::Stop(absl::Duration grace) {
  if (!running()) return wait_status_;
  if (grace > absl::ZeroDuration()) {
    ::kill(pid_, SIGTERM);
    if (std::optional<int> status = Wait(grace)) return status;
  }
  Kill();
  return std::nullopt;
}

absl::StatusOr<std::string> ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ErrnoError("readlink", "/proc/self/exe", ec.value());
  return exe.parent_path().string();
}

absl::StatusOr<std::string> RplasmaBinary(const std::string& configured, absl::string_view name) {
  std::string binary = configured;
  if (binary.empty()) {
    ASSIGN_OR_RETURN(std::string dir, ExecutableDir());
    binary = absl::StrCat(dir, "/", name);
  }
  if (::access(binary.c_str(), X_OK) != 0) {
    return MakeError(ErrorCode::kUnavailable, absl::StrCat(name, " not found at ", binary));
  }
  return binary;
}

absl::StatusOr<ScratchDir> ScratchDir::Create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return ErrnoError("mkdtemp", pattern, errno);
  return ScratchDir(std::move(pattern));
}

ScratchDir ScratchDir::CreateOrDie(const std::string& prefix) {
  absl::StatusOr<ScratchDir> dir = Create(prefix);
  CHECK(dir.ok()) << dir.status().ToString();
  return std::move(*dir);
}

ScratchDir& ScratchDir::operator=(ScratchDir&& other) noexcept {
  if (this != &other) {
    ScratchDir old(std::move(path_));
    path_ = std::exchange(other.path_, std::string());
  }
  return *this;
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: nothing to report to in a destructor
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FileTail(const std::string& path, size_t max_bytes) {
  std::string all = ReadWholeFile(path);
  return all.size() > max_bytes ? all.substr(all.size() - max_bytes) : all;
}

}  // namespace rplasma::bench
