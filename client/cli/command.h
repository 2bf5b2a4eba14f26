// The rplasma CLI's subcommands: each is a row in a table (name, usage, summary, handler), and
// each group of them lives in its own file (object_commands.cc, store_commands.cc,
// fetch_command.cc) and contributes its rows through a function declared here. AllCommands()
// (command_table.cc) concatenates the groups; the main program only dispatches.
//
// A handler gets the words after its name and returns a status: OK (exit 0), an error from the
// store or the system (printed as one line, exit 1), or a UsageError (printed with the usage
// line, exit 2).
#ifndef RPLASMA_CLIENT_CLI_COMMAND_H_
#define RPLASMA_CLIENT_CLI_COMMAND_H_

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "client/client.h"

namespace rplasma::cli {

// What every handler may use: the options from the global flags, a lazily connected Client, and
// the output streams (tests may point them elsewhere).
class CliContext {
 public:
  CliContext(ClientOptions options, std::FILE* out, std::FILE* err)
      : options_(std::move(options)), out_(out), err_(err) {}

  const ClientOptions& options() const { return options_; }
  // Connects on first use.
  absl::StatusOr<Client*> client();
  std::FILE* out() const { return out_; }
  std::FILE* err() const { return err_; }

 private:
  ClientOptions options_;
  std::unique_ptr<Client> client_;
  std::FILE* out_;
  std::FILE* err_;
};

struct Command {
  const char* name;
  const char* usage;    // arguments after the name, e.g. "ID|--label L [FILE|-]"
  const char* summary;  // one line for --help
  absl::Status (*run)(CliContext& context, absl::Span<const std::string> args);
};

// A status that makes main print the command's usage line and exit 2.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// Object ids on a command line: "HEX40", or "--label TEXT" (ObjectID::FromLabel). Consumes the
// words it uses from the front of `args`.
absl::StatusOr<ObjectID> TakeObjectId(absl::Span<const std::string>& args);

std::vector<Command> ObjectCommands();  // put, get, delete
std::vector<Command> StoreCommands();   // list, stats, evict
std::vector<Command> FetchCommands();   // fetch (only built with Client::Fetch)
std::vector<Command> AllCommands();

}  // namespace rplasma::cli

#endif  // RPLASMA_CLIENT_CLI_COMMAND_H_
