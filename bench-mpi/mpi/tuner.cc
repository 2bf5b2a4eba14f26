#include "bench-mpi/mpi/tuner.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "bench-mpi/common/median.h"
#include "bench-mpi/common/size_units.h"
#include "bench-mpi/mpi/auto_ratio.h"
#include "bench-mpi/mpi/bench_mpi.h"
#include "bench-mpi/mpi/cost_fit.h"
#include "bench-mpi/mpi/fetch_phase.h"
#include "bench-mpi/mpi/fetch_plan.h"
#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

// p50 (us) by [shift][size index]; aggregate p50 of shift 1 by size index.
struct Sweep {
  std::vector<std::vector<double>> mine;
  std::vector<double> aggregate_shift1;
  // Per size, every rank's shift-1 round times, rank by rank (rank 0 only; PairedAutoVsBest).
  std::vector<std::vector<int64_t>> rounds_shift1;
};

// Measures `protocols` interleaved (fetch_phase.h) at every shift and size, on the nodes that run
// them; sweeps[l] gets protocols[l]'s p50s. Rows are labelled `benchmark`.
absl::Status MeasureInterleaved(BenchMpi& bench, const std::vector<FetchProtocol>& protocols,
                                const std::vector<uint64_t>& sizes, const std::string& benchmark,
                                std::vector<Sweep>* sweeps, std::vector<ResultRow>* rows) {
  const MpiWorld& world = bench.world();
  sweeps->assign(protocols.size(), Sweep());
  for (Sweep& sweep : *sweeps) {
    sweep.mine.assign(world.size(), std::vector<double>(sizes.size(), 0));
    sweep.aggregate_shift1.assign(sizes.size(), 0);
    sweep.rounds_shift1.assign(sizes.size(), {});
  }
  std::string names;
  for (FetchProtocol p : protocols) absl::StrAppend(&names, names.empty() ? "" : ",", FetchProtocolName(p));
  for (int shift = 1; shift < world.size(); ++shift) {
    if (world.root()) {
      std::printf("  [%s %s shift %d] %zu sizes, interleaved ...\n", benchmark.c_str(), names.c_str(), shift,
                  sizes.size());
      std::fflush(stdout);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<FetchLane> lanes;
      for (FetchProtocol protocol : protocols) {
        const std::string phase =
            absl::StrCat(bench.nonce(), "/", benchmark, "/", FetchProtocolName(protocol), "/", shift, "/", sizes[i]);
        lanes.push_back({&bench.clients(protocol), MakeShiftPlan(shift, world.size(), world.rank(), 1, phase),
                         bench.ForcedFor(protocol)});
      }
      FetchPhaseOptions options;
      options.object_size = sizes[i];
      options.warmup = bench.options().warmup;
      options.repeat = bench.options().repeat;
      options.verify = bench.options().verify;
      options.fetch_timeout = bench.options().fetch_timeout;
      std::vector<RankPhaseResult> results;
      RETURN_IF_ERROR(RunInterleavedFetchPhases(world, lanes, options, &results));
      for (size_t l = 0; l < protocols.size(); ++l) {
        (*sweeps)[l].mine[shift][i] = results[l].Summarize().p50_us;
        ResultRow labels;
        labels.benchmark = benchmark;
        labels.transport = bench.transport_label();
        labels.protocol = std::string(FetchProtocolName(protocols[l]));
        labels.pattern = absl::StrCat("shift", shift);
        labels.object_size = sizes[i];
        labels.ranks = world.size();
        std::vector<ResultRow> got = SummarizeRanks(world, results[l], labels, bench.options().per_rank_rows);
        if (shift == 1) (*sweeps)[l].rounds_shift1[i] = world.GatherToRoot(results[l].round_ns);
        if (world.root() && shift == 1 && !got.empty()) (*sweeps)[l].aggregate_shift1[i] = got.back().p50_us;
        rows->insert(rows->end(), got.begin(), got.end());
      }
    }
  }
  return absl::OkStatus();
}

std::string Encode(const std::vector<double>& v) {
  std::string out;
  for (double x : v) absl::StrAppend(&out, out.empty() ? "" : ",", x);
  return out;
}

std::vector<double> Decode(const std::string& text) {
  std::vector<double> out;
  for (absl::string_view w : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    double x = 0;
    out.push_back(absl::SimpleAtod(w, &x) ? std::max(x, 1e-3) : 1e-3);
  }
  return out;
}

void PrintWhy(const char* who, const std::vector<uint64_t>& sizes, const std::vector<double>& get,
              const std::vector<double>& pin, const ThresholdChoice& c) {
  std::printf("%s: get fit %.1f us + %.3f GB/s (rms %.2f), pin fit %.1f us + %.3f GB/s (rms %.2f)\n", who,
              c.get.latency_us, c.get.us_per_byte > 0 ? 1e-3 / c.get.us_per_byte : 0, c.get.rms_rel_error,
              c.pin.latency_us, c.pin.us_per_byte > 0 ? 1e-3 / c.pin.us_per_byte : 0, c.pin.rms_rel_error);
  std::printf("  fitted crossover %.0f bytes, measured crossover %s, chosen threshold %s (%s one step)\n",
              c.fit_crossover, FormatByteSize(std::max<uint64_t>(c.measured_crossover, 1)).c_str(),
              c.threshold == 0 ? "0" : FormatByteSize(c.threshold).c_str(),
              c.within_one_step ? "within" : "NOT within");
  // The two curves around the chosen point.
  for (int i = std::max(0, c.chosen_index - 1); i <= std::min<int>(sizes.size() - 1, c.chosen_index + 1); ++i) {
    std::printf("  at %8s: get p50 %9.1f us (fit %9.1f)  pin p50 %9.1f us (fit %9.1f)%s\n",
                FormatByteSize(sizes[i]).c_str(), get[i], c.get.At(sizes[i]), pin[i], c.pin.At(sizes[i]),
                i == c.chosen_index ? "  <- threshold" : "");
  }
}

}  // namespace

absl::Status RunTuner(BenchMpi& bench, std::vector<ResultRow>* rows) {
  const MpiWorld& world = bench.world();
  const BenchMpiOptions& options = bench.options();
  std::vector<uint64_t> sizes;
  for (uint64_t s = options.tune_min_size; s <= options.tune_max_size; s *= 2) sizes.push_back(s);
  if (sizes.size() < 3) return MakeError(ErrorCode::kInvalidArgument, "--tune needs at least 3 sizes");

  // 1. get and pin, interleaved, for the fit (rows: benchmark `tune`). On a shared node both lanes
  // force their protocol, and its manager's threshold (fixed: no probes) decides nothing.
  if (bench.shared_node()) {
    RETURN_IF_ERROR(bench.StartManagers(FetchProtocol::kGet, bench.ThresholdFor(FetchProtocol::kGet)));
  } else {
    for (FetchProtocol p : {FetchProtocol::kGet, FetchProtocol::kPin}) {
      RETURN_IF_ERROR(bench.StartManagers(p, bench.ThresholdFor(p)));
    }
  }
  std::vector<Sweep> fixed;
  RETURN_IF_ERROR(MeasureInterleaved(bench, {FetchProtocol::kGet, FetchProtocol::kPin}, sizes, "tune", &fixed, rows));
  const Sweep& get = fixed[0];
  const Sweep& pin = fixed[1];
  // Node names, not ids: a manager's id gets a new random suffix at every start, and the managers
  // that load this file (ours below, or a cluster's later) are new starts.
  const std::vector<std::string> nodes = world.AllGather(bench.node_name());
  std::string mine;
  for (int shift = 1; shift < world.size(); ++shift) {
    absl::StrAppend(&mine, Encode(get.mine[shift]), ";", Encode(pin.mine[shift]), "|");
  }
  const std::vector<std::string> all = world.AllGather(mine);

  std::string file;
  if (world.root()) {
    std::vector<PeerChoice> peers;
    std::vector<std::vector<double>> get_by_size(sizes.size()), pin_by_size(sizes.size());
    for (int r = 0; r < world.size(); ++r) {
      std::vector<std::string> per_shift = absl::StrSplit(all[r], '|', absl::SkipEmpty());
      for (size_t k = 0; k < per_shift.size(); ++k) {
        std::vector<std::string> two = absl::StrSplit(per_shift[k], ';');
        if (two.size() != 2) continue;
        std::vector<double> s = Decode(two[0]), rd = Decode(two[1]);
        if (s.size() != sizes.size() || rd.size() != sizes.size()) continue;
        const int peer = (r + static_cast<int>(k) + 1) % world.size();
        PeerChoice choice{nodes[r], nodes[peer], ChooseThreshold(sizes, s, rd)};
        PrintWhy(absl::StrCat("pair ", nodes[r], " <- ", nodes[peer]).c_str(), sizes, s, rd, choice.choice);
        peers.push_back(choice);
        for (size_t i = 0; i < sizes.size(); ++i) {
          get_by_size[i].push_back(s[i]);
          pin_by_size[i].push_back(rd[i]);
        }
      }
    }
    std::vector<double> get_med, pin_med;
    for (size_t i = 0; i < sizes.size(); ++i) {
      get_med.push_back(Median(get_by_size[i]));
      pin_med.push_back(Median(pin_by_size[i]));
    }
    ThresholdChoice cluster = ChooseThreshold(sizes, get_med, pin_med);
    PrintWhy("cluster (median over pairs)", sizes, get_med, pin_med, cluster);
    file =
        RenderThresholdFile(cluster, peers,
                            absl::StrCat("# ", world.size(), " ranks, transport ", bench.transport_label(), ", sizes ",
                                         FormatByteSize(sizes.front()), "..", FormatByteSize(sizes.back()), ", ",
                                         options.repeat, " rounds per point; peer lines name nodes by --node_name\n"));
  }
  // Every rank loads its own copy (ranks may be on different hosts).
  file = world.Broadcast(file);
  absl::Status status;
  if (world.root()) {
    std::ofstream out(options.tune_out);
    out << file;
    out.close();
    if (!out)
      status = MakeError(ErrorCode::kInternal, absl::StrCat("cannot write ", options.tune_out));
    else
      std::printf("threshold file: %s\n", options.tune_out.c_str());
  }
  RETURN_IF_ERROR(AgreeAcrossRanks(world, status));
  const std::string local_copy = absl::StrCat(options.tune_out, ".rank", world.rank());
  {
    std::ofstream out(local_copy);
    out << file;
  }

  // 2. auto with the tuned file, interleaved with get and pin again, so that auto / best
  // compares measurements taken under the same machine conditions (rows: `tune_check`).
  std::vector<Sweep> check;
  status = bench.StartManagers(FetchProtocol::kAuto, local_copy);
  if (status.ok()) {
    status = MeasureInterleaved(bench, {FetchProtocol::kGet, FetchProtocol::kPin, FetchProtocol::kAuto}, sizes,
                                "tune_check", &check, rows);
  }
  std::remove(local_copy.c_str());
  RETURN_IF_ERROR(status);
  absl::StatusOr<nlohmann::json> stats = QueryManagerStats(bench.node(FetchProtocol::kAuto).manager_socket());
  std::string report = stats.status().ToString();
  if (stats.ok()) {
    report = absl::StrCat("threshold_mode=", MemberText(*stats, "threshold_mode"),
                          " default_threshold=", MemberText(*stats, "default_threshold"),
                          " peer_thresholds=", MemberText(*stats, "peer_thresholds"));
  }
  const std::vector<std::string> reports = world.AllGather(report);
  if (world.root()) {
    for (int r = 0; r < world.size(); ++r) std::printf("manager stats rank %d: %s\n", r, reports[r].c_str());
    // The ratio, paired by round as in the sweep, goes on the aggregate shift-1 auto rows of the
    // check (the CSV's auto_vs_best).
    std::vector<double> paired;
    for (size_t i = 0; i < sizes.size(); ++i) {
      paired.push_back(
          PairedAutoVsBest(check[0].rounds_shift1[i], check[1].rounds_shift1[i], check[2].rounds_shift1[i]));
    }
    for (ResultRow& row : *rows) {
      if (row.benchmark != "tune_check" || row.protocol != "auto" || row.rank >= 0 || row.pattern != "shift1") continue;
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == row.object_size) row.auto_vs_best = paired[i];
      }
    }
    std::vector<AutoRatioPoint> points;
    for (size_t i = 0; i < sizes.size(); ++i) {
      points.push_back({"shift1", sizes[i], check[0].aggregate_shift1[i], check[1].aggregate_shift1[i],
                        check[2].aggregate_shift1[i], paired[i]});
    }
    std::printf("auto (tuned file) vs the better fixed protocol, shift-1 pairs, paired by round:\n%s",
                AutoRatioSummary(points).c_str());
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace rplasma::bench
