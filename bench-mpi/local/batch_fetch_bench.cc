#include "bench-mpi/local/batch_fetch_bench.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/object_pattern.h"
#include "bench-mpi/common/size_units.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

constexpr absl::Duration kBatchFetchTimeout = absl::Seconds(60);
// How long the directory may take to list a fresh batch, and a store to free deleted objects.
constexpr absl::Duration kSettleWait = absl::Seconds(10);
// Values per MSET command stay under this many bytes (the server's query buffer limit is larger).
constexpr uint64_t kMsetBytes = 64u << 20;

uint64_t Aligned(uint64_t size) { return (size + 63) / 64 * 64; }

// Waits until `client`'s store has `bytes` free (a deleted object a peer still references is
// freed when the reference goes).
absl::Status WaitForRoom(Client& client, uint64_t bytes, const char* node) {
  const absl::Time give_up = absl::Now() + kSettleWait;
  for (;;) {
    ASSIGN_OR_RETURN(StatsReply stats, client.Stats());
    const uint64_t free_bytes = stats.capacity - std::min(stats.capacity, stats.used_bytes);
    if (free_bytes >= bytes) return absl::OkStatus();
    if (absl::Now() > give_up) {
      return MakeError(
          ErrorCode::kOutOfMemory,
          absl::StrFormat("node %s's arena: %s free after %s, a batch needs %s", node, FormatByteSize(free_bytes),
                          absl::FormatDuration(kSettleWait), FormatByteSize(bytes)));
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
}

// Waits until the directory lists a location for every id.
absl::Status WaitListed(Directory& directory, const std::vector<ObjectID>& ids) {
  const absl::Time give_up = absl::Now() + kSettleWait;
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<std::vector<ObjectLocation>> found, directory.Lookup(ids));
    const auto unlisted = std::count_if(found.begin(), found.end(), [](const auto& at) { return at.empty(); });
    if (unlisted == 0) return absl::OkStatus();
    if (absl::Now() > give_up) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       absl::StrFormat("%d of %d batch objects not in the directory after %s", unlisted, ids.size(),
                                       absl::FormatDuration(kSettleWait)));
    }
    absl::SleepFor(absl::Microseconds(200));
  }
}

// Checks every fetched object on the reader against the bytes put on the owner (its id's pattern).
absl::Status VerifyBatch(Client& reader, const std::vector<ObjectID>& ids, uint64_t size) {
  ASSIGN_OR_RETURN(std::vector<ObjectBuffer> buffers, reader.Get(ids));
  for (size_t i = 0; i < ids.size(); ++i) {
    const ObjectBuffer& got = buffers[i];
    if (!got.valid()) {
      return MakeError(ErrorCode::kInternal,
                       absl::StrCat("batch object ", i, " (", ids[i].Hex(),
                                    ") not on the reader after its fetch: ", got.status().message()));
    }
    if (got.data().size() != size || !VerifyPattern(ids[i], got.data()).ok()) {
      return MakeError(ErrorCode::kInternal, absl::StrFormat("batch object %d (%s): %d bytes fetched differ from the "
                                                             "%d put",
                                                             i, ids[i].Hex(), got.data().size(), size));
    }
  }
  return absl::OkStatus();  // `buffers` release their references here
}

// Puts `count` fresh objects of `size` bytes on node A (each its id's pattern); their ids.
absl::Status PutBatch(const BatchFetchPeers& peers, uint64_t size, int64_t count, std::vector<ObjectID>* ids) {
  std::vector<uint8_t> bytes(size);
  for (int64_t i = 0; i < count; ++i) {
    ids->push_back(ObjectID::Random());
    FillPattern(ids->back(), absl::MakeSpan(bytes));
    absl::Status status = peers.owner->Put(ids->back(), bytes);
    if (!status.ok()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrFormat("put of batch object %d of %d (%s) on node A: %s", i,
                                                                count, FormatByteSize(size), status.message()));
    }
  }
  return absl::OkStatus();
}

// One timed Fetch of `ids` on node B (`hint` "" = none), then every byte checked (untimed). `*ns`
// is the Fetch call's duration.
absl::Status TimedBatchFetch(const BatchFetchPeers& peers, const std::vector<ObjectID>& ids, uint64_t size,
                             const std::string& hint, const char* what, int64_t* ns) {
  const int64_t t0 = NowNs();
  absl::Status status = peers.reader->Fetch(ids, kBatchFetchTimeout, hint);
  *ns = NowNs() - t0;
  if (!status.ok()) {
    status = MakeError(ErrorCodeOf(status), absl::StrFormat("%s Fetch of %d x %s on node B: %s", what, ids.size(),
                                                            FormatByteSize(size), status.message()));
  }
  if (status.ok()) status = VerifyBatch(*peers.reader, ids, size);
  return status;
}

// One fetch round of three timed Fetches on node B (ns[0..2]):
//   cold:   a fresh batch put on A, listed by the directory (both untimed), fetched;
//   warm:   the same batch again, B's copies deleted: B's manager knows where the ids live;
//   hinted: a second fresh batch put on A (untimed) and fetched at once naming A's node.
// Every fetch is checked byte for byte, and everything put is deleted on both nodes (untimed).
absl::Status FetchRound(const BatchFetchPeers& peers, uint64_t size, int64_t count, int64_t ns[3]) {
  const uint64_t need = Aligned(size) * static_cast<uint64_t>(count);
  for (int kind = 0; kind < 2; ++kind) {  // the cold/warm batch, then the hinted one
    RETURN_IF_ERROR(WaitForRoom(*peers.owner, need, "A"));
    RETURN_IF_ERROR(WaitForRoom(*peers.reader, need, "B"));
    std::vector<ObjectID> ids;
    absl::Status status = PutBatch(peers, size, count, &ids);
    if (kind == 0) {
      if (status.ok()) status = WaitListed(*peers.directory, ids);
      if (status.ok()) status = TimedBatchFetch(peers, ids, size, "", "cold", &ns[0]);
      if (status.ok()) status = peers.reader->Delete(ids);
      if (status.ok()) status = WaitForRoom(*peers.reader, need, "B");
      if (status.ok()) status = TimedBatchFetch(peers, ids, size, "", "warm", &ns[1]);
    } else if (status.ok()) {
      status = TimedBatchFetch(peers, ids, size, peers.owner_node, "hinted", &ns[2]);
    }
    // Copies first, then originals; both whatever happened, so the next size starts empty.
    absl::Status deleted_b = peers.reader->Delete(ids);
    absl::Status deleted_a = peers.owner->Delete(ids);
    RETURN_IF_ERROR(status);
    RETURN_IF_ERROR(deleted_b);
    RETURN_IF_ERROR(deleted_a);
  }
  return absl::OkStatus();
}

// Sets `keys` to distinct values of `size` bytes, at most kMsetBytes of values per MSET.
absl::Status SetValues(RedisConnection& redis, const std::vector<std::string>& keys, uint64_t size) {
  const size_t per_command = std::max<uint64_t>(1, kMsetBytes / size);
  for (size_t first = 0; first < keys.size(); first += per_command) {
    const size_t n = std::min(per_command, keys.size() - first);
    std::vector<std::string> values(n, std::string(size, '\0'));
    for (size_t i = 0; i < n; ++i) {
      FillPattern(ObjectID::FromLabel(keys[first + i]),
                  absl::MakeSpan(reinterpret_cast<uint8_t*>(values[i].data()), size));
    }
    RETURN_IF_ERROR(redis.MSet(absl::MakeConstSpan(keys).subspan(first, n), values));
  }
  return absl::OkStatus();
}

absl::Status MgetRound(RedisConnection& redis, const std::vector<std::string>& keys, uint64_t size, int64_t* ns) {
  size_t wrong = 0;
  const int64_t t0 = NowNs();
  absl::Status status = redis.MGet(keys, [&](size_t, absl::string_view value) { wrong += value.size() != size; });
  *ns = NowNs() - t0;
  RETURN_IF_ERROR(status);
  if (wrong > 0) {
    return MakeError(ErrorCode::kInternal,
                     absl::StrFormat("MGET: %d of %d values are not %d bytes", wrong, keys.size(), size));
  }
  return absl::OkStatus();
}

absl::Status StreamRound(TcpStreamClient& stream, std::vector<uint8_t>& destination, int64_t* ns) {
  const int64_t t0 = NowNs();
  absl::Status status = stream.Transfer(destination.data(), destination.size());
  *ns = NowNs() - t0;
  return status;
}

// A row whose latency is per batch of `count` objects; throughput from the median round.
BenchResult BatchRow(const char* benchmark, const char* system, const char* transport, const std::string& protocol,
                     uint64_t size, int64_t count, const LatencyRecorder& rounds) {
  BenchResult r = MakeResult(benchmark, system, transport, protocol, size, rounds.Summarize());
  const double p50_s = r.latency.p50_us / 1e6;
  r.ops_per_s = p50_s > 0 ? static_cast<double>(count) / p50_s : 0;
  r.gb_per_s = r.ops_per_s * static_cast<double>(size) / 1e9;
  r.metrics = {{"batch", static_cast<double>(count)}, {"rounds", static_cast<double>(r.latency.count)},
               {"min_us", r.latency.min_us},          {"max_us", r.latency.max_us},
               {"objects_per_s", r.ops_per_s},        {"gbps", r.gb_per_s}};
  return r;
}

}  // namespace

uint64_t BatchArenaBytes(const LocalBenchOptions& options) {
  if (options.batch <= 1) return 0;
  uint64_t most = 0;
  for (uint64_t size : options.sizes) {
    most = std::max(most, Aligned(size) * static_cast<uint64_t>(options.BatchCount(size)));
  }
  return most;
}

uint64_t LargestBatchBytes(const LocalBenchOptions& options) {
  if (options.batch <= 1) return 0;
  uint64_t most = 0;
  for (uint64_t size : options.sizes) most = std::max(most, size * static_cast<uint64_t>(options.BatchCount(size)));
  return most;
}

absl::Status RunBatchFetchSize(const LocalBenchOptions& options, const BatchFetchPeers& peers, uint64_t size,
                               const std::string& protocol, ResultReporter& reporter, std::ostream& out) {
  const int64_t count = options.BatchCount(size);
  if (count < options.batch) {
    out << absl::StrFormat("  batch of %s objects capped at %d (not %d): %d x %s <= --batch-bytes %s\n",
                           FormatByteSize(size), count, options.batch, count, FormatByteSize(size),
                           FormatByteSize(options.batch_bytes));
  }
  std::vector<std::string> keys;
  for (int64_t i = 0; i < count; ++i) keys.push_back(absl::StrCat("rplasma-bench-batch:", size, ":", i));
  absl::Status status = SetValues(*peers.redis, keys, size);
  std::vector<uint8_t> destination(size * static_cast<uint64_t>(count));
  LatencyRecorder cold, warm, hinted, mget, stream;
  // Round 0 is the warm-up (connections, page faults on B's arena and the stream buffer).
  for (int64_t round = 0; round <= options.rounds && status.ok(); ++round) {
    int64_t fetch_ns[3] = {0, 0, 0};
    int64_t ns[2] = {0, 0};
    const std::function<absl::Status()> runs[3] = {
        [&] { return FetchRound(peers, size, count, fetch_ns); },
        [&] { return MgetRound(*peers.redis, keys, size, &ns[0]); },
        [&] { return StreamRound(*peers.stream, destination, &ns[1]); },
    };
    for (int k = 0; k < 3 && status.ok(); ++k) status = runs[(round + k) % 3]();
    if (status.ok() && round > 0) {
      cold.Record(fetch_ns[0]);
      warm.Record(fetch_ns[1]);
      hinted.Record(fetch_ns[2]);
      mget.Record(ns[0]);
      stream.Record(ns[1]);
    }
  }
  absl::Status cleanup = peers.redis->DelAll(keys);
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(cleanup);
  BenchResult m = BatchRow("batch_mget", "redis", "tcp", "resp", size, count, mget);
  BenchResult s = BatchRow("batch_stream", "tcp_stream", "tcp", "raw", size, count, stream);
  const std::pair<const char*, const LatencyRecorder*> fetches[3] = {
      {"batch_fetch", &cold}, {"batch_fetch_warm", &warm}, {"batch_fetch_hinted", &hinted}};
  for (const auto& [name, rounds] : fetches) {
    BenchResult f = BatchRow(name, "rplasma", options.transport.c_str(), protocol, size, count, *rounds);
    if (f.latency.p50_us > 0 && m.latency.p50_us > 0) f.metrics["ratio_vs_mget"] = f.latency.p50_us / m.latency.p50_us;
    if (f.latency.p50_us > 0) f.metrics["ratio_vs_stream"] = s.latency.p50_us / f.latency.p50_us;
    RETURN_IF_ERROR(reporter.Add(std::move(f)));
  }
  RETURN_IF_ERROR(reporter.Add(std::move(m)));
  return reporter.Add(std::move(s));
}

void PrintBatchFetchTable(const ResultReporter& reporter, std::ostream& out) {
  bool header = false;
  for (const BenchResult& f : reporter.results()) {
    if (f.benchmark != "batch_fetch") continue;
    const BenchResult* w = reporter.Find("batch_fetch_warm", "rplasma", f.object_size);
    const BenchResult* h = reporter.Find("batch_fetch_hinted", "rplasma", f.object_size);
    const BenchResult* m = reporter.Find("batch_mget", "redis", f.object_size);
    const BenchResult* s = reporter.Find("batch_stream", "tcp_stream", f.object_size);
    if (!header) {
      out << absl::StrFormat("\nbatch fetch: one Client::Fetch of the whole batch on node B; medians of %d rounds\n",
                             f.latency.count)
          << absl::StrFormat("%9s %6s %10s %21s %10s %10s %8s %9s %10s %10s %10s %10s %10s %13s\n", "size", "batch",
                             "cold_ms", "(min..max)", "warm_ms", "hinted_ms", "GB/s", "mget_ms", "stream_ms",
                             "cold/mget", "warm/mget", "hint/mget", "objects/s", "cold/stream");
      header = true;
    }
    out << absl::StrFormat(
        "%9s %6.0f %10.3f %21s %10.3f %10.3f %8.3f %9.3f %10.3f %9.2fx %9.2fx %9.2fx %10.0f %12.3fx\n",
        FormatByteSize(f.object_size), f.Metric("batch"), f.latency.p50_us / 1e3,
        absl::StrFormat("(%.3f..%.3f)", f.latency.min_us / 1e3, f.latency.max_us / 1e3),
        w ? w->latency.p50_us / 1e3 : 0.0, h ? h->latency.p50_us / 1e3 : 0.0, f.gb_per_s,
        m ? m->latency.p50_us / 1e3 : 0.0, s ? s->latency.p50_us / 1e3 : 0.0, f.Metric("ratio_vs_mget"),
        w ? w->Metric("ratio_vs_mget") : 0.0, h ? h->Metric("ratio_vs_mget") : 0.0, f.ops_per_s,
        f.Metric("ratio_vs_stream"));
  }
  if (header) {
    out << "cold: fresh ids listed by the directory, no hint (B's manager goes to the owner it guesses once two "
           "lookups agreed; --manager-arg=--guess-owner=false: to the directory); warm: the same ids again (B's "
           "copies deleted); hinted: fresh ids fetched at once naming node A. x/mget: fetch time over MGET time (lower "
           "is better); cold/stream: the "
           "fetch's throughput over the stream's (higher is better)\n";
  }
}

}  // namespace rplasma::bench
