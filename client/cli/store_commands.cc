// list, stats, evict: what the store holds and how full it is.
#include <string>

#include "absl/strings/str_format.h"
#include "client/cli/cli_format.h"
#include "client/cli/command.h"
#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

absl::Status RunList(CliContext& context, absl::Span<const std::string> args) {
  if (!args.empty()) return UsageError("list takes no arguments");
  ASSIGN_OR_RETURN(Client * client, context.client());
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, client->List());
  std::FILE* out = context.out();
  std::fprintf(out, "%-40s  %-8s  %10s  %10s  %4s  %s\n", "ID", "STATE", "DATA", "METADATA", "REFS", "GENERATION");
  uint64_t total = 0;
  for (const ObjectInfo& o : objects) {
    std::fprintf(out, "%-40s  %-8s  %10s  %10s  %4d  %llu\n", o.id.Hex().c_str(),
                 o.state == ObjectState::kSealed ? "sealed" : "created", FormatSize(o.data_size).c_str(),
                 FormatSize(o.metadata_size).c_str(), o.ref_count, static_cast<unsigned long long>(o.generation));
    total += o.data_size + o.metadata_size;
  }
  std::fprintf(out, "%zu object%s, %s\n", objects.size(), objects.size() == 1 ? "" : "s", FormatSize(total).c_str());
  return absl::OkStatus();
}

absl::Status RunStats(CliContext& context, absl::Span<const std::string> args) {
  if (!args.empty()) return UsageError("stats takes no arguments");
  ASSIGN_OR_RETURN(Client * client, context.client());
  ASSIGN_OR_RETURN(StatsReply s, client->Stats());
  std::FILE* out = context.out();
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
  return absl::OkStatus();
}

absl::Status RunEvict(CliContext& context, absl::Span<const std::string> args) {
  if (args.size() != 1) return UsageError("evict needs one SIZE");
  absl::StatusOr<uint64_t> bytes = ParseSize(args[0]);
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
      {"list", "", "list every object: id, state, sizes, references", RunList},
      {"stats", "", "show the store's capacity, usage and counters", RunStats},
      {"evict", "SIZE", "evict at least SIZE (e.g. 64MiB) of unreferenced objects", RunEvict},
  };
}

}  // namespace rplasma::cli
