// rplasma-store: the node's object store. Flags map onto StoreOptions (store/store_options.h);
// the command line's conventions (spellings, sizes, --flagfile, --help) are
// protocol/command_line/command_line.h's, described in docs/OPERATIONS.md.
#include <signal.h>

#include <algorithm>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

#include "protocol/base/byte_size.h"
#include "protocol/base/logging.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/command_line/command_line.h"
#include "protocol/command_line/default_socket.h"
#include "protocol/command_line/keep_heap.h"
#include "protocol/command_line/metrics_flags.h"
#include "protocol/command_line/service_notify.h"
#include "store/store_options.h"
#include "store/store_server.h"

namespace {
// Every flag's default is StoreOptions' (written once, in store/store_options.h).
const rplasma::StoreOptions kDefaults;
}  // namespace

ABSL_FLAG(std::string, socket, rplasma::DefaultStoreSocket(),
          "Unix socket to listen on (its directory is created 0700 if missing)");
ABSL_FLAG(std::string, memory, "", "arena size (required), e.g. 1G or 1.5G; binary units K, M, G, T");
ABSL_FLAG(std::string, hugepages, "",
          "back the arena with huge pages (a sealed hugetlb memfd): 'on' for the system's default huge page size, "
          "or a page size such as 2M or 1G; a hugetlbfs mount directory is still accepted and only tells the page "
          "size (nothing is created in it). Default: off (normal pages)");
ABSL_FLAG(std::string, name, kDefaults.name, "store name reported to clients and in logs");
ABSL_FLAG(absl::Duration, partial_frame_timeout, kDefaults.partial_frame_timeout,
          "a client that started a request frame and has not completed it within this is disconnected");
ABSL_FLAG(std::string, max_partial_frame_bytes, rplasma::FormatByteSize(kDefaults.max_partial_frame_bytes),
          "cap on the bytes of incomplete request frames across all clients (the client holding the most is "
          "disconnected past it)");
ABSL_FLAG(std::string, max_output_bytes, rplasma::FormatByteSize(kDefaults.max_output_bytes),
          "a client with more replies/events queued than this (a subscriber that fell behind) is disconnected");

ABSL_FLAG(std::string, index_entries, "auto",
          "entries of the shared-memory index that serves gets with no IPC (a power of two >= 16, 64 bytes each); "
          "0 = off (every get uses the socket); auto = one per 4 KiB of arena, 4096 to 1M");
ABSL_FLAG(
    uint64_t, slots_per_client, kDefaults.slots_per_client,
    "references each client can hold through its shared-memory slots (a power of two >= 16); more use the socket");

namespace {

// The options from the parsed flags; a usage error names the flag as it was typed.
absl::StatusOr<rplasma::StoreOptions> StoreOptionsFromFlags(const rplasma::CommandLine& command_line) {
  rplasma::StoreOptions options;
  options.socket_path = absl::GetFlag(FLAGS_socket);
  ASSIGN_OR_RETURN(options.hugepages, rplasma::ParseHugepages(absl::GetFlag(FLAGS_hugepages)));
  options.name = absl::GetFlag(FLAGS_name);
  if (absl::GetFlag(FLAGS_memory).empty()) {
    return rplasma::MakeError(rplasma::ErrorCode::kInvalidArgument,
                              "--memory is required (the arena size, e.g. --memory 1G)");
  }
  ASSIGN_OR_RETURN(options.memory_bytes, command_line.ByteSize("memory", absl::GetFlag(FLAGS_memory)));
  ASSIGN_OR_RETURN(options.max_output_bytes,
                   command_line.ByteSize("max_output_bytes", absl::GetFlag(FLAGS_max_output_bytes)));
  ASSIGN_OR_RETURN(options.max_partial_frame_bytes,
                   command_line.ByteSize("max_partial_frame_bytes", absl::GetFlag(FLAGS_max_partial_frame_bytes)));
  options.partial_frame_timeout = absl::GetFlag(FLAGS_partial_frame_timeout);
  options.pause_input_bytes = std::min<uint64_t>(options.pause_input_bytes, options.max_output_bytes / 4);
  if (const std::string entries = absl::GetFlag(FLAGS_index_entries); entries != "auto") {
    uint64_t value = 0;
    if (!absl::SimpleAtoi(entries, &value)) {
      return rplasma::MakeError(rplasma::ErrorCode::kInvalidArgument,
                                absl::StrCat("--index-entries '", entries, "': expected auto or a number"));
    }
    options.index_entries = value;
  }
  options.slots_per_client = absl::GetFlag(FLAGS_slots_per_client);
  ASSIGN_OR_RETURN(options.metrics, rplasma::MetricsExportOptionsFromFlags());
  RETURN_IF_ERROR(options.Validate());
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  rplasma::UseReleaseMutexChecks();
  const rplasma::CommandLine command_line = rplasma::CommandLine::ParseOrExit(
      argc, argv, "rplasma-store", "rplasma-store --memory SIZE [--socket PATH] [--hugepages on|SIZE] [--name NAME]");
  absl::StatusOr<rplasma::StoreOptions> options = StoreOptionsFromFlags(command_line);
  if (!options.ok()) command_line.ExitWithUsageError(options.status());
  // A daemon outlives the terminal it was started from: a hangup is not a reason to stop.
  ::signal(SIGHUP, SIG_IGN);
  // Batch requests free reply and event buffers of hundreds of KiB: keep them (keep_heap.h).
  rplasma::KeepHeap();

  absl::StatusOr<std::unique_ptr<rplasma::StoreServer>> server = rplasma::StoreServer::Create(*options);
  if (!server.ok()) {
    LOG(ERROR) << "rplasma-store: " << server.status().message();
    return 1;
  }
  // Create has bound and is listening: connections are accepted from here on.
  if (absl::Status notified = rplasma::NotifyServiceManager("READY=1"); !notified.ok()) {
    LOG(WARNING) << "telling systemd the store is ready: " << notified.message();
  }
  absl::Status run = (*server)->Run();
  (void)rplasma::NotifyServiceManager("STOPPING=1");  // best effort: systemd sees the exit anyway
  server->reset();                                    // closes clients, unlinks the socket
  if (!run.ok()) {
    LOG(ERROR) << "rplasma-store: " << run.message();
    return 1;
  }
  return 0;
}
