// rplasma: the command-line client.
//   rplasma [--store-socket PATH] [--manager-socket PATH] COMMAND [ARGS...]
// Exit status: 0 success, 1 the operation failed, 2 bad usage. Flags take dashes or underscores
// (protocol/command_line/flag_spelling.h); the default sockets are the daemons' (default_socket.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

#include "client/cli/command.h"
#include "protocol/base/status.h"
#include "protocol/command_line/default_socket.h"
#include "protocol/command_line/flag_spelling.h"

namespace rplasma::cli {
namespace {

void PrintHelp(std::FILE* out, const std::vector<Command>& commands) {
  absl::FPrintF(out, "usage: rplasma [--store-socket PATH] [--manager-socket PATH] COMMAND [ARGS...]\n\n");
  absl::FPrintF(out, "  --store-socket PATH    the store's socket (default $RPLASMA_STORE_SOCKET or %s)\n",
                DefaultStoreSocket());
  absl::FPrintF(out,
                "  --manager-socket PATH  the manager's client socket, for fetch and stats --manager (default\n"
                "                         %s when the store's socket is the default too)\n",
                DefaultManagerSocket());
  absl::FPrintF(out, "  --help, --version      this text; the version and git revision\n");
  absl::FPrintF(out,
                "Flags take dashes or underscores (--store_socket = --store-socket). Sizes: 4096, 64K,\n"
                "1.5M (binary units).\n\ncommands:\n");
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
  bool default_store_socket = false;
  if (const char* env = std::getenv("RPLASMA_STORE_SOCKET"); env != nullptr && *env != '\0') {
    options.store_socket = env;
  } else {
    options.store_socket = DefaultStoreSocket();
    default_store_socket = true;
  }
  bool manager_socket_given = false;
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  for (; i < args.size() && absl::StartsWith(args[i], "--"); ++i) {
    const std::optional<FlagArg> flag = SplitFlagArg(args[i]);
    if (!flag.has_value()) {  // "--": the command follows
      ++i;
      break;
    }
    if (flag->name == "help") {
      PrintHelp(stdout, commands);
      return 0;
    }
    if (flag->name == "version") {
      absl::PrintF("%s\n", VersionLine("rplasma"));
      return 0;
    }
    std::string value;
    if (flag->value.has_value()) {
      value = *flag->value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      absl::FPrintF(stderr, "rplasma: %s needs a value\n", flag->spelled);
      return 2;
    }
    if (flag->name == "store_socket") {
      options.store_socket = value;
      default_store_socket = false;
    } else if (flag->name == "manager_socket") {
      options.manager_socket = value;
      manager_socket_given = true;
    } else {
      absl::FPrintF(stderr, "rplasma: unknown option %s (see rplasma --help)\n", flag->spelled);
      return 2;
    }
  }
  // The default pair is one node's; a store named explicitly may be another node's, whose
  // manager socket must then be named too.
  if (!manager_socket_given && default_store_socket) options.manager_socket = DefaultManagerSocket();
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
