// fetch: ask the local manager to bring objects from other nodes into this store. Built only
// when the client library has Client::Fetch (client/client_fetch.cc).
#include <string>

#include "absl/strings/numbers.h"
#include "client/cli/command.h"
#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

// fetch ID|--label L... [--timeout MS]
absl::Status RunFetch(CliContext& context, absl::Span<const std::string> args) {
  std::vector<ObjectID> ids;
  absl::Duration timeout = absl::Seconds(30);
  while (!args.empty()) {
    if (args[0] == "--timeout") {
      int64_t ms = 0;
      if (args.size() < 2 || !absl::SimpleAtoi(args[1], &ms) || ms < 0) return UsageError("--timeout needs milliseconds");
      timeout = absl::Milliseconds(ms);
      args.remove_prefix(2);
      continue;
    }
    ASSIGN_OR_RETURN(ObjectID id, TakeObjectId(args));
    ids.push_back(id);
  }
  if (ids.empty()) return UsageError("missing object id");
  if (context.options().manager_socket.empty()) return UsageError("fetch needs --manager-socket PATH");
  ASSIGN_OR_RETURN(Client * client, context.client());
  return client->Fetch(ids, timeout);
}

}  // namespace

std::vector<Command> FetchCommands() {
  return {
      {"fetch", "ID|--label L... [--timeout MS]", "bring objects from other nodes here (needs --manager-socket)",
       RunFetch},
  };
}

}  // namespace rplasma::cli
