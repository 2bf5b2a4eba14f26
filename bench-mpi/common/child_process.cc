#include "bench-mpi/common/child_process.h"

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
#include "protocol/base/status.h"
#include "protocol/base/unique_fd.h"

extern char** environ;

namespace rplasma::bench {

namespace {

// The child's side of Spawn, between vfork and execve. It shares the parent's memory and the
// parent is suspended, so it only makes system calls on what the parent prepared; on failure it
// writes errno to `report_fd` (close-on-exec: an exec that succeeds closes it) and exits 127.
[[noreturn]] void ExecChild(const char* path, char* const* args, const char* log_path, pid_t parent,
                            const sigset_t& mask, int report_fd) {
  int err = 0;
  const int log = ::open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0 || ::dup2(log, STDOUT_FILENO) < 0 || ::dup2(log, STDERR_FILENO) < 0 ||
      ::dup2(null, STDIN_FILENO) < 0) {
    err = errno;
  } else if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    err = errno;
  } else if (::getppid() != parent) {
    // The parent died before prctl took effect: no signal will come, so do not start at all.
    err = ESRCH;
  } else {
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    ::execve(path, args, environ);
    err = errno;
  }
  (void)!::write(report_fd, &err, sizeof(err));
  ::_exit(127);
}

}  // namespace

absl::StatusOr<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                 const std::string& log_path) {
  if (argv.empty()) return MakeError(ErrorCode::kInvalidArgument, "spawn: empty argv");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
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
  if (pid == 0) ExecChild(argv[0].c_str(), args.data(), log_path.c_str(), parent, old, report_write.get());
  const int vfork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return ErrnoError("vfork", argv[0], vfork_errno);
  report_write = UniqueFd();
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(report_read.get(), &child_errno, sizeof(child_errno))) < 0 && errno == EINTR) {
  }
  if (n == 0) return ChildProcess(pid);  // exec'd: the report pipe closed unwritten
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return ErrnoError("spawn", argv[0], n == static_cast<ssize_t>(sizeof(child_errno)) ? child_errno : EIO);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

ChildProcess::~ChildProcess() { Stop(); }

bool ChildProcess::Running() {
  if (pid_ < 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  pid_ = -1;  // exited (reaped now) or not our child any more
  return false;
}

void ChildProcess::Stop(absl::Duration grace) {
  if (!Running()) return;
  ::kill(pid_, SIGTERM);
  absl::Time deadline = absl::Now() + grace;
  while (absl::Now() < deadline) {
    if (!Running()) return;
    absl::SleepFor(absl::Milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

absl::StatusOr<std::string> ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ErrnoError("readlink", "/proc/self/exe", ec.value());
  return exe.parent_path().string();
}

absl::StatusOr<ScratchDir> ScratchDir::Create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return ErrnoError("mkdtemp", pattern, errno);
  return ScratchDir(std::move(pattern));
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

std::string FileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() > max_bytes ? all.substr(all.size() - max_bytes) : all;
}

}  // namespace rplasma::bench
