#include "bench-mpi/local/target_summary.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench-mpi/common/size_units.h"

namespace rplasma::bench {
namespace {

using Outcome = TargetCheck::Outcome;

// ratio <= limit passes (at_most) or ratio >= limit passes (!at_most).
TargetCheck Check(std::string name, std::string goal, std::string measured, double ratio, double limit,
                  bool at_most) {
  TargetCheck c{std::move(name), std::move(goal), std::move(measured), ratio, limit, at_most, Outcome::kShort};
  if (at_most ? ratio <= limit : ratio >= limit) c.outcome = Outcome::kPass;
  return c;
}

TargetCheck Skipped(std::string name, std::string goal, std::string why) {
  return TargetCheck{std::move(name), std::move(goal), std::move(why), 0, 0, true, Outcome::kSkipped};
}

}  // namespace

std::vector<TargetCheck> EvaluateLocalTargets(const ResultReporter& results,
                                              const std::vector<uint64_t>& sizes) {
  const uint64_t smallest = *std::min_element(sizes.begin(), sizes.end());
  const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const uint64_t bandwidth_size =
      std::find(sizes.begin(), sizes.end(), uint64_t{64} << 20) != sizes.end() ? uint64_t{64} << 20 : largest;
  std::vector<TargetCheck> checks;

  const BenchResult* get_small = results.Find("get", "rplasma", smallest);
  const BenchResult* get_large = results.Find("get", "rplasma", largest);
  const std::string get_latency_goal = "get p50 <= 1.3x unix-socket ping-pong p50";
  const BenchResult* ping = nullptr;
  for (const BenchResult& r : results.results()) {
    if (r.benchmark == "ping_pong") ping = &r;
  }
  if (get_small != nullptr && ping != nullptr) {
    checks.push_back(Check("get latency", get_latency_goal,
                           absl::StrFormat("get(%s) p50 %.2f us, ping-pong p50 %.2f us", FormatSize(smallest),
                                           get_small->latency.p50_us, ping->latency.p50_us),
                           get_small->latency.p50_us / ping->latency.p50_us, 1.3, true));
  } else {
    checks.push_back(Skipped("get latency", get_latency_goal, "get or ping-pong not measured"));
  }

  const std::string flat_goal = "get p50 of the largest size <= 1.2x get p50 of the smallest";
  if (get_small != nullptr && get_large != nullptr && largest != smallest) {
    checks.push_back(Check("get size-independent", flat_goal,
                           absl::StrFormat("get(%s) p50 %.2f us, get(%s) p50 %.2f us", FormatSize(largest),
                                           get_large->latency.p50_us, FormatSize(smallest),
                                           get_small->latency.p50_us),
                           get_large->latency.p50_us / get_small->latency.p50_us, 1.2, true));
  } else {
    checks.push_back(Skipped("get size-independent", flat_goal, "needs get at two sizes"));
  }

  // Throughput ratios use medians (size / p50, 1 / p50): one preempted run of a large copy on a
  // shared machine otherwise moves the mean of a handful of samples by tens of percent.
  // Put is create+write+seal for a writer that has its bytes in hand; create_write_seal (a writer
  // filling the span itself, then Seal hashing it in a second pass) is shown beside it.
  const std::string bw_goal = "create+write+seal (Put) GB/s >= 0.7x memcpy GB/s (medians)";
  const BenchResult* put = results.Find("put", "rplasma", bandwidth_size);
  const BenchResult* cws = results.Find("create_write_seal", "rplasma", bandwidth_size);
  const BenchResult* copy = results.Find("copy", "memcpy", bandwidth_size);
  auto median_gb = [](const BenchResult* r) { return r->object_size / r->latency.p50_us / 1e3; };
  if (put != nullptr && copy != nullptr && put->latency.p50_us > 0 && copy->latency.p50_us > 0) {
    const double copy_gb = median_gb(copy);
    std::string raw = "not measured";
    if (cws != nullptr && cws->latency.p50_us > 0) {
      raw = absl::StrFormat("%.2f GB/s = %.2fx", median_gb(cws), median_gb(cws) / copy_gb);
    }
    checks.push_back(Check("write bandwidth", bw_goal,
                           absl::StrFormat("%s: put %.2f GB/s, memcpy %.2f GB/s; create+memcpy+seal %s",
                                           FormatSize(bandwidth_size), median_gb(put), copy_gb, raw),
                           median_gb(put) / copy_gb, 0.7, false));
  } else {
    checks.push_back(Skipped("write bandwidth", bw_goal, "put or memcpy not measured"));
  }

  const std::string rt_goal = "create+seal+get ops/s >= 5x Redis SET+GET ops/s (one client, medians)";
  const BenchResult* cycle = results.Find("create_seal_get", "rplasma", smallest);
  const BenchResult* redis = results.Find("set_get", "redis", smallest);
  if (cycle != nullptr && redis != nullptr && cycle->latency.p50_us > 0) {
    const double ops = 1e6 / cycle->latency.p50_us;
    const double redis_ops = 1e6 / redis->latency.p50_us;
    checks.push_back(Check("small round trip", rt_goal,
                           absl::StrFormat("%s: rplasma %.0f ops/s, redis %.0f ops/s (means: %.0f, %.0f)",
                                           FormatSize(smallest), ops, redis_ops, cycle->ops_per_s, redis->ops_per_s),
                           ops / redis_ops, 5.0, false));
  } else {
    checks.push_back(Skipped("small round trip", rt_goal, "create_seal_get or Redis not measured"));
  }

  const std::string batch_goal = "batch get <= 2 us per id (p50)";
  const BenchResult* batch = results.Find("batch_get", "rplasma", smallest);
  if (batch != nullptr) {
    checks.push_back(Check("batch get", batch_goal,
                           absl::StrFormat("%s: %.3f us per id in batches of %.0f", FormatSize(smallest),
                                           batch->latency.p50_us, batch->Metric("batch")),
                           batch->latency.p50_us, 2.0, true));
  } else {
    checks.push_back(Skipped("batch get", batch_goal, "batch_get not measured"));
  }

  const std::string mem_goal = "store memory <= 200 B per object";
  const BenchResult* mem = nullptr;
  for (const BenchResult& r : results.results()) {
    if (r.benchmark == "memory_per_object") mem = &r;
  }
  if (mem != nullptr) {
    const double anon = mem->Metric("anon_bytes_per_object");
    checks.push_back(Check("memory per object", mem_goal,
                           absl::StrFormat("%.0f objects: heap %.1f B/object (arena %.1f B/object, rss %.1f)",
                                           mem->Metric("objects"), anon, mem->Metric("arena_bytes_per_object"),
                                           mem->Metric("rss_bytes_per_object")),
                           anon, 200, true));
  } else {
    checks.push_back(Skipped("memory per object", mem_goal, "memory run not selected (--objects-overhead 0 or --only)"));
  }
  return checks;
}

std::vector<TargetCheck> EvaluateFetchTargets(const ResultReporter& results) {
  std::vector<uint64_t> sizes;
  for (const BenchResult& r : results.results()) {
    if (r.benchmark == "fetch") sizes.push_back(r.object_size);
  }
  std::vector<TargetCheck> checks;
  const std::string stream_goal = "fetch GB/s >= 0.85x raw TCP stream GB/s (medians)";
  const std::string redis_goal = "fetch GB/s >= 4x Redis GET GB/s (medians)";
  const std::string rtt_goal = "small fetch p50 <= 2.5x TCP round trip p50";
  if (sizes.empty()) {
    for (const std::string& goal : {stream_goal, redis_goal, rtt_goal}) {
      checks.push_back(Skipped("fetch", goal, "no fetch measured"));
    }
    return checks;
  }
  const uint64_t smallest = *std::min_element(sizes.begin(), sizes.end());
  const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const uint64_t big = std::find(sizes.begin(), sizes.end(), uint64_t{64} << 20) != sizes.end() ? uint64_t{64} << 20
                                                                                                 : largest;
  const uint64_t small = std::find(sizes.begin(), sizes.end(), uint64_t{1} << 10) != sizes.end() ? uint64_t{1} << 10
                                                                                                  : smallest;
  auto median_gbps = [](const BenchResult* r) { return r->object_size / r->latency.p50_us / 1e3; };
  const BenchResult* fetch_big = results.Find("fetch", "rplasma", big);
  const BenchResult* stream_big = results.Find("stream", "tcp_stream", big);
  const BenchResult* redis_big = results.Find("get", "redis", big);
  if (fetch_big != nullptr && stream_big != nullptr) {
    checks.push_back(Check("fetch vs stream", stream_goal,
                           absl::StrFormat("%s: fetch %.2f GB/s, raw stream %.2f GB/s", FormatSize(big),
                                           median_gbps(fetch_big), median_gbps(stream_big)),
                           median_gbps(fetch_big) / median_gbps(stream_big), 0.85, false));
  } else {
    checks.push_back(Skipped("fetch vs stream", stream_goal, "fetch or stream missing"));
  }
  if (fetch_big != nullptr && redis_big != nullptr) {
    checks.push_back(Check("fetch vs redis", redis_goal,
                           absl::StrFormat("%s: fetch %.2f GB/s, Redis GET %.2f GB/s", FormatSize(big),
                                           median_gbps(fetch_big), median_gbps(redis_big)),
                           median_gbps(fetch_big) / median_gbps(redis_big), 4.0, false));
  } else {
    checks.push_back(Skipped("fetch vs redis", redis_goal, "fetch or Redis GET missing"));
  }
  const BenchResult* fetch_small = results.Find("fetch", "rplasma", small);
  const BenchResult* stream_small = results.Find("stream", "tcp_stream", small);
  if (fetch_small != nullptr && stream_small != nullptr) {
    checks.push_back(Check("small fetch latency", rtt_goal,
                           absl::StrFormat("%s: fetch p50 %.1f us, TCP round trip p50 %.1f us", FormatSize(small),
                                           fetch_small->latency.p50_us, stream_small->latency.p50_us),
                           fetch_small->latency.p50_us / stream_small->latency.p50_us, 2.5, true));
  } else {
    checks.push_back(Skipped("small fetch latency", rtt_goal, "fetch or stream missing"));
  }
  return checks;
}

std::vector<TargetCheck> CombineRounds(const std::vector<std::vector<TargetCheck>>& rounds) {
  std::vector<std::string> names;  // in first-seen order
  for (const std::vector<TargetCheck>& round : rounds) {
    for (const TargetCheck& c : round) {
      if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    }
  }
  std::vector<TargetCheck> combined;
  for (const std::string& name : names) {
    std::vector<const TargetCheck*> measured;
    const TargetCheck* last = nullptr;
    for (const std::vector<TargetCheck>& round : rounds) {
      for (const TargetCheck& c : round) {
        if (c.name != name) continue;
        last = &c;
        if (c.outcome != Outcome::kSkipped) measured.push_back(&c);
      }
    }
    if (measured.empty()) {
      combined.push_back(*last);
      continue;
    }
    std::vector<const TargetCheck*> sorted = measured;
    std::sort(sorted.begin(), sorted.end(), [](const TargetCheck* a, const TargetCheck* b) { return a->ratio < b->ratio; });
    const TargetCheck& median = *sorted[(sorted.size() - 1) / 2];  // the lower median: an actual round
    std::vector<std::string> ratios;
    for (const TargetCheck* c : measured) ratios.push_back(absl::StrFormat("%.3f", c->ratio));
    combined.push_back(Check(name, median.goal,
                             absl::StrFormat("median of %d rounds (ratios %s); median round: %s", measured.size(),
                                             absl::StrJoin(ratios, ", "), median.measured),
                             median.ratio, median.limit, median.at_most));
  }
  return combined;
}

void PrintTargets(const std::vector<TargetCheck>& checks, std::ostream& out) {
  out << "\nTargets (ratios within this run)\n";
  for (const TargetCheck& c : checks) {
    const char* outcome = c.outcome == Outcome::kPass    ? "PASS"
                          : c.outcome == Outcome::kShort ? "SHORT"
                                                         : "SKIPPED";
    if (c.outcome == Outcome::kSkipped) {
      out << absl::StrFormat("  %-7s %-21s %s — %s\n", outcome, c.name, c.goal, c.measured);
    } else {
      out << absl::StrFormat("  %-7s %-21s %s — %s — ratio %.3f (limit %.3g)\n", outcome, c.name, c.goal,
                             c.measured, c.ratio, c.limit);
    }
  }
}

}  // namespace rplasma::bench
