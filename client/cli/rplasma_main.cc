// rplasma: the command-line client.
//   rplasma [--store-socket PATH] [--manager-socket PATH] COMMAND [ARGS...]
// Exit status: 0 success, 1 the operation failed, 2 bad usage.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "client/cli/command.h"
#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

constexpr char kDefaultStoreSocket[] = "/tmp/rplasma/store.sock";

void PrintHelp(std::FILE* out, const std::vector<Command>& commands) {
  absl::FPrintF(out, "usage: rplasma [--store-socket PATH] [--manager-socket PATH] COMMAND [ARGS...]\n\n");
  absl::FPrintF(out, "  --store-socket PATH    the store's socket (default $RPLASMA_STORE_SOCKET or %s)\n",
                kDefaultStoreSocket);
  absl::FPrintF(out, "  --manager-socket PATH  the manager's client socket (for fetch)\n\ncommands:\n");
  for (const Command& c : commands) {
    absl::FPrintF(out, "  %-8s %-40s %s\n", c.name, c.usage, c.summary);
  }
  absl::FPrintF(out, "\nIDs are 40 hex digits, or --label TEXT for a stable id derived from TEXT.\n");
}

// Started with fd 0, 1 or 2 closed, the store socket would take that number: object bytes or
// error text would then go into the socket, and reading stdin would wait on it forever. Each
// closed one is pointed at /dev/null before anything else opens an fd. False if that fails.
bool OpenClosedStandardFds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open returns the lowest free fd: this one, since every lower one is open by now.
    const int opened = ::open("/dev/null", O_RDWR);
    if (opened != fd) return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  if (!OpenClosedStandardFds()) return 1;  // stderr may be the missing one: nowhere to say why
  const std::vector<Command> commands = AllCommands();
  ClientOptions options;
  options.client_name = "rplasma-cli";
  if (const char* env = std::getenv("RPLASMA_STORE_SOCKET"); env != nullptr && *env != '\0') {
    options.store_socket = env;
  } else {
    options.store_socket = kDefaultStoreSocket;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  for (; i < args.size() && absl::StartsWith(args[i], "--"); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help") {
      PrintHelp(stdout, commands);
      return 0;
    }
    std::string value;
    std::string name = flag;
    if (size_t eq = flag.find('='); eq != std::string::npos) {
      name = flag.substr(0, eq);
      value = flag.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      absl::FPrintF(stderr, "rplasma: %s needs a value\n", flag);
      return 2;
    }
    if (name == "--store-socket") {
      options.store_socket = value;
    } else if (name == "--manager-socket") {
      options.manager_socket = value;
    } else {
      absl::FPrintF(stderr, "rplasma: unknown option %s (see rplasma --help)\n", name);
      return 2;
    }
  }
  if (i == args.size()) {
    PrintHelp(stderr, commands);
    return 2;
  }
  const std::string& name = args[i];
  const Command* command = nullptr;
  for (const Command& c : commands) {
    if (name == c.name) command = &c;
  }
  if (command == nullptr) {
    absl::FPrintF(stderr, "rplasma: unknown command '%s' (see rplasma --help)\n", name);
    return 2;
  }
  CliContext context(options, stdout, stderr);
  absl::Status status = command->run(context, absl::MakeConstSpan(args).subspan(i + 1));
  std::fflush(stdout);
  if (status.ok()) return 0;
  if (IsUsageError(status)) {
    absl::FPrintF(stderr, "rplasma %s: %s\nusage: rplasma %s %s\n", name, status.message(), name, command->usage);
    return 2;
  }
  absl::FPrintF(stderr, "rplasma %s: %s: %s\n", name, ErrorCodeName(ErrorCodeOf(status)), status.message());
  return 1;
}

}  // namespace
}  // namespace rplasma::cli

int main(int argc, char** argv) { return rplasma::cli::Main(argc, argv); }
