#include "bench-mpi/local/memory_overhead.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"

#include "bench-mpi/common/latency_recorder.h"
#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/process_memory.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/store_messages.h"

namespace rplasma::bench {
namespace {

double PerObject(uint64_t after, uint64_t before, int64_t count) {
  return (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(count);
}

}  // namespace

absl::Status RunMemoryOverhead(Client& client, pid_t store_pid, int64_t count, uint64_t object_size,
                               ResultReporter& reporter) {
  ASSIGN_OR_RETURN(StatsReply stats_before, client.Stats());
  ASSIGN_OR_RETURN(ProcessMemory before, ReadProcessMemory(store_pid));
  std::vector<uint8_t> source(object_size, 0x42);
  std::vector<ObjectID> ids;
  ids.reserve(count);
  LatencyRecorder put;
  put.Reserve(count);
  absl::Status status;
  for (int64_t i = 0; i < count; ++i) {
    const ObjectID id = ObjectID::Random();
    const int64_t t0 = NowNs();
    auto created = client.Create(id, object_size, {}, /*evict_if_full=*/false);
    if (!created.ok()) {
      status = MakeError(ErrorCodeOf(created.status()),
                         absl::StrFormat("memory overhead: create #%d: %s", i, created.status().message()));
      break;
    }
    ids.push_back(id);
    std::memcpy(created->data.data(), source.data(), object_size);
    status = client.Seal(id);
    if (status.ok()) status = client.Release(id);
    put.Record(NowNs() - t0);
    if (!status.ok()) break;
  }
  absl::StatusOr<ProcessMemory> after = ReadProcessMemory(store_pid);
  absl::StatusOr<StatsReply> stats_after = client.Stats();
  // Delete in pages the store accepts in one request.
  absl::Status deleted;
  for (size_t i = 0; i < ids.size() && deleted.ok(); i += kMaxIdsPerRequest) {
    size_t n = std::min<size_t>(kMaxIdsPerRequest, ids.size() - i);
    deleted = client.Delete(absl::MakeConstSpan(ids).subspan(i, n));
  }
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(after.status());
  RETURN_IF_ERROR(stats_after.status());
  RETURN_IF_ERROR(deleted);
  absl::SleepFor(absl::Milliseconds(100));  // let the store finish deferred frees
  ASSIGN_OR_RETURN(ProcessMemory after_delete, ReadProcessMemory(store_pid));

  BenchResult r = MakeResult("memory_per_object", "rplasma", "unix", "store", object_size, put.Summarize());
  r.metrics = {
      {"objects", static_cast<double>(count)},
      {"anon_bytes_per_object", PerObject(after->rss_anon, before.rss_anon, count)},
      {"rss_bytes_per_object", PerObject(after->vm_rss, before.vm_rss, count)},
      {"arena_bytes_per_object", PerObject(stats_after->used_bytes, stats_before.used_bytes, count)},
      {"anon_bytes_after_delete_per_object", PerObject(after_delete.rss_anon, before.rss_anon, count)},
  };
  return reporter.Add(std::move(r));
}

}  // namespace rplasma::bench
