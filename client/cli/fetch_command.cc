// fetch: ask the local manager to bring objects from other nodes into this store. Built only
// when the client library has Client::Fetch (client/client_fetch.cc).
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

#include "client/cli/command.h"
#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

// fetch ID|--label L... [--timeout MS] [--hint NODE] [--protocol get|pin]
absl::Status RunFetch(CliContext& context, absl::Span<const std::string> args) {
  std::vector<ObjectID> ids;
  absl::Duration timeout = absl::Seconds(30);
  std::string hint;
  ForcedProtocol protocol = ForcedProtocol::kNone;
  while (!args.empty()) {
    if (args[0] == "--protocol") {
      const std::optional<ForcedProtocol> p = args.size() < 2 ? std::nullopt : ForcedProtocolFromName(args[1]);
      if (!p.has_value()) return UsageError("--protocol needs get, pin or none (the manager's choice)");
      protocol = *p;
      args.remove_prefix(2);
      continue;
    }
    if (args[0] == "--hint") {
      if (args.size() < 2 || args[1].empty())
        return UsageError("--hint needs a node id (rplasma node-id on that node)");
      hint = args[1];
      args.remove_prefix(2);
      continue;
    }
    if (args[0] == "--timeout") {
      int64_t ms = 0;
      if (args.size() < 2 || !absl::SimpleAtoi(args[1], &ms) || ms < 0)
        return UsageError("--timeout needs milliseconds");
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
  return client->Fetch(ids, timeout, hint, protocol);
}

// node-id: the local manager's node id, what a fetch elsewhere names with --hint.
absl::Status RunNodeId(CliContext& context, absl::Span<const std::string> args) {
  if (!args.empty()) return UsageError("node-id takes no arguments");
  if (context.options().manager_socket.empty()) return UsageError("node-id needs --manager-socket PATH");
  ASSIGN_OR_RETURN(Client * client, context.client());
  ASSIGN_OR_RETURN(std::string node_id, client->ManagerNodeId());
  absl::FPrintF(context.out(), "%s\n", node_id);
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> FetchCommands() {
  return {
      {"fetch", "ID|--label L... [--timeout MS] [--hint NODE] [--protocol get|pin]",
       "bring objects from other nodes here, trying node NODE first, by the peer protocol the manager "
       "chooses or the one given (needs --manager-socket)",
       RunFetch},
      {"node-id", "", "the local manager's node id, for --hint elsewhere (needs --manager-socket)", RunNodeId},
  };
}

}  // namespace rplasma::cli
