// list, stats, evict: what the store holds and how full it is (and, with --manager, what the
// local manager has fetched). --json prints one JSON document on one line instead of the table.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "client/cli/cli_format.h"
#include "client/cli/command.h"
#include "protocol/base/json_writer.h"
#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

struct Switches {
  bool json = false;
  bool manager = false;
};

// Reads the switches `command` accepts (`allow_manager`: --manager too); anything else is a usage error.
absl::StatusOr<Switches> TakeSwitches(absl::string_view command, absl::Span<const std::string> args,
                                      bool allow_manager) {
  Switches s;
  for (const std::string& arg : args) {
    if (arg == "--json") {
      s.json = true;
    } else if (allow_manager && arg == "--manager") {
      s.manager = true;
    } else {
      return UsageError(absl::StrCat(command, ": unexpected argument '", arg, "'"));
    }
  }
  return s;
}

const char* StateName(ObjectState state) { return state == ObjectState::kSealed ? "sealed" : "created"; }

// {"objects":[{"id":...,"state":...,...},...],"count":N,"bytes":B}
std::string ListJson(const std::vector<ObjectInfo>& objects) {
  JsonArray array;
  uint64_t total = 0;
  for (const ObjectInfo& o : objects) {
    array.Object(JsonObject()
                     .String("id", o.id.Hex())
                     .String("state", StateName(o.state))
                     .Number("data_size", o.data_size)
                     .Number("metadata_size", o.metadata_size)
                     .SignedNumber("ref_count", o.ref_count)
                     .Number("generation", o.generation)
                     .Number("checksum", o.checksum));
    total += o.data_size + o.metadata_size;
  }
  return JsonObject().Array("objects", array).Number("count", objects.size()).Number("bytes", total).str();
}

std::string StatsJson(const std::string& store_name, const StatsReply& s) {
  return JsonObject()
      .String("store", store_name)
      .Number("capacity", s.capacity)
      .Number("used_bytes", s.used_bytes)
      .Number("objects_sealed", s.objects_sealed)
      .Number("objects_created", s.objects_created)
      .Number("ref_count", s.ref_count)
      .Number("clients", s.clients)
      .Number("evictions", s.evictions)
      .Number("evicted_bytes", s.evicted_bytes)
      .Number("free_blocks", s.free_blocks)
      .Number("largest_free_block", s.largest_free_block)
      .Decimal("fragmentation", s.fragmentation, 4)
      .Number("waiting_gets", s.waiting_gets)
      .Number("subscribers", s.subscribers)
      .Number("indexed_objects", s.indexed_objects)
      .Number("slot_references", s.slot_references)
      .Number("reclaims_waiting", s.reclaims_waiting)
      .str();
}

absl::Status RunList(CliContext& context, absl::Span<const std::string> args) {
  ASSIGN_OR_RETURN(Switches switches, TakeSwitches("list", args, /*allow_manager=*/false));
  ASSIGN_OR_RETURN(Client * client, context.client());
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, client->List());
  std::FILE* out = context.out();
  if (switches.json) {
    absl::FPrintF(out, "%s\n", ListJson(objects));
    return absl::OkStatus();
  }
  std::fprintf(out, "%-40s  %-8s  %10s  %10s  %4s  %s\n", "ID", "STATE", "DATA", "METADATA", "REFS", "GENERATION");
  uint64_t total = 0;
  for (const ObjectInfo& o : objects) {
    std::fprintf(out, "%-40s  %-8s  %10s  %10s  %4d  %llu\n", o.id.Hex().c_str(), StateName(o.state),
                 FormatSize(o.data_size).c_str(), FormatSize(o.metadata_size).c_str(), o.ref_count,
                 static_cast<unsigned long long>(o.generation));
    total += o.data_size + o.metadata_size;
  }
  std::fprintf(out, "%zu object%s, %s\n", objects.size(), objects.size() == 1 ? "" : "s", FormatSize(total).c_str());
  return absl::OkStatus();
}

absl::Status RunStats(CliContext& context, absl::Span<const std::string> args) {
  ASSIGN_OR_RETURN(Switches switches, TakeSwitches("stats", args, /*allow_manager=*/true));
  if (switches.manager && context.options().manager_socket.empty()) {
    return UsageError("--manager needs the manager's client socket (rplasma --manager-socket PATH)");
  }
  ASSIGN_OR_RETURN(Client * client, context.client());
  std::FILE* out = context.out();
  if (switches.manager) {
    // The manager renders its own document; the human form only indents it.
    ASSIGN_OR_RETURN(std::string json, client->ManagerStats());
    absl::FPrintF(out, "%s\n", switches.json ? json : IndentJson(json));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(StatsReply s, client->Stats());
  if (switches.json) {
    absl::FPrintF(out, "%s\n", StatsJson(client->store_name(), s));
    return absl::OkStatus();
  }
  const double used_percent = s.capacity == 0 ? 0 : 100.0 * static_cast<double>(s.used_bytes) / s.capacity;
  absl::FPrintF(out, "store:          %s\n", client->store_name());
  absl::FPrintF(out, "capacity:       %s\n", FormatSize(s.capacity));
  absl::FPrintF(out, "used:           %s (%.1f%%)\n", FormatSize(s.used_bytes), used_percent);
  absl::FPrintF(out, "objects:        %d sealed, %d unsealed\n", s.objects_sealed, s.objects_created);
  absl::FPrintF(out, "references:     %d\n", s.ref_count);
  absl::FPrintF(out, "clients:        %d\n", s.clients);
  absl::FPrintF(out, "evictions:      %d (%s)\n", s.evictions, FormatSize(s.evicted_bytes));
  absl::FPrintF(out, "free blocks:    %d (largest %s)\n", s.free_blocks, FormatSize(s.largest_free_block));
  absl::FPrintF(out, "fragmentation:  %.1f%%\n", 100.0 * s.fragmentation);
  absl::FPrintF(out, "waiting gets:   %d\n", s.waiting_gets);
  absl::FPrintF(out, "subscribers:    %d\n", s.subscribers);
  absl::FPrintF(out, "shared index:   %d objects, %d slot references, %d deletes waiting for slots\n",
                s.indexed_objects, s.slot_references, s.reclaims_waiting);
  return absl::OkStatus();
}

absl::Status RunEvict(CliContext& context, absl::Span<const std::string> args) {
  if (args.size() != 1) return UsageError("evict needs one SIZE");
  absl::StatusOr<uint64_t> bytes = ParseByteSize(args[0]);
  if (!bytes.ok()) return UsageError(bytes.status().message());
  ASSIGN_OR_RETURN(Client * client, context.client());
  ASSIGN_OR_RETURN(EvictReply reply, client->Evict(*bytes));
  absl::FPrintF(context.out(), "evicted %d object%s, %s\n", reply.objects_evicted,
                reply.objects_evicted == 1 ? "" : "s", FormatSize(reply.bytes_evicted));
  return absl::OkStatus();
}

}  // namespace

std::vector<Command> StoreCommands() {
  return {
      {"list", "[--json]", "list every object: id, state, sizes, references", RunList},
      {"stats", "[--manager] [--json]", "the store's capacity, usage and counters (--manager: the manager's)",
       RunStats},
      {"evict", "SIZE", "evict at least SIZE (e.g. 64MiB) of unreferenced objects", RunEvict},
  };
}

}  // namespace rplasma::cli
