#include "bench-mpi/mpi/cost_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rplasma::bench {

LinearCost FitCost(const std::vector<uint64_t>& sizes, const std::vector<double>& times_us) {
  // Minimise sum w (a + b s - t)^2 with w = 1/t^2: the weighted normal equations.
  double sw = 0, sws = 0, swss = 0, swt = 0, swst = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double s = static_cast<double>(sizes[i]), t = times_us[i];
    const double w = 1.0 / (t * t);
    sw += w;
    sws += w * s;
    swss += w * s * s;
    swt += w * t;
    swst += w * s * t;
  }
  LinearCost fit;
  const double det = sw * swss - sws * sws;
  if (det != 0) {
    fit.us_per_byte = (sw * swst - sws * swt) / det;
    fit.latency_us = (swt - fit.us_per_byte * sws) / sw;
  } else if (sw > 0) {
    fit.latency_us = swt / sw;
  }
  double sq = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double rel = (fit.At(static_cast<double>(sizes[i])) - times_us[i]) / times_us[i];
    sq += rel * rel;
  }
  fit.rms_rel_error = sizes.empty() ? 0 : std::sqrt(sq / sizes.size());
  return fit;
}

ThresholdChoice ChooseThreshold(const std::vector<uint64_t>& sizes, const std::vector<double>& get_us,
                                const std::vector<double>& pin_us) {
  ThresholdChoice c;
  c.get = FitCost(sizes, get_us);
  c.pin = FitCost(sizes, pin_us);
  const double dslope = c.get.us_per_byte - c.pin.us_per_byte;
  const double dlat = c.pin.latency_us - c.get.latency_us;
  if (dslope > 0) {
    c.fit_crossover = std::max(0.0, dlat / dslope);
  } else {
    c.fit_crossover = dlat > 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  // T_m: index k means "get for sizes[0..k], pin above"; -1 means pin everywhere.
  const int n = static_cast<int>(sizes.size());
  double best_cost = std::numeric_limits<double>::infinity();
  for (int k = -1; k < n; ++k) {
    double cost = 0;
    for (int i = 0; i < n; ++i) {
      const double chosen = i <= k ? get_us[i] : pin_us[i];
      // Excess over the better protocol, capped at 100%: one point slowed down by something else
      // (a descheduled process) must not outvote all the others.
      cost += std::min(chosen / std::min(get_us[i], pin_us[i]) - 1.0, 1.0);
    }
    if (cost < best_cost - 1e-12) {
      best_cost = cost;
      c.measured_index = k;
    }
  }
  // The fitted crossover as a ladder index: the largest swept size at or below it (nearest in log).
  int fit_index = -1;
  for (int i = 0; i < n; ++i) {
    if (std::log2(static_cast<double>(sizes[i])) <= std::log2(std::max(c.fit_crossover, 1.0)) + 0.5) fit_index = i;
  }
  c.chosen_index = std::clamp(fit_index, c.measured_index - 1, c.measured_index + 1);
  c.chosen_index = std::clamp(c.chosen_index, -1, n - 1);
  c.measured_crossover = c.measured_index < 0 ? 0 : sizes[c.measured_index];
  c.threshold = c.chosen_index < 0 ? 0 : sizes[c.chosen_index];
  c.within_one_step = std::abs(c.chosen_index - c.measured_index) <= 1;
  return c;
}

std::string RenderThresholdFile(const ThresholdChoice& cluster, const std::vector<PeerChoice>& peers,
                                const std::string& header) {
  std::string out = absl::StrCat("# rplasma threshold file written by rplasma-bench-mpi --tune\n", header);
  auto fit_line = [](absl::string_view who, const ThresholdChoice& c) {
    return absl::StrFormat(
        "fit %s get_latency_us=%.2f get_gb_per_s=%.3f get_rms=%.3f pin_latency_us=%.2f pin_gb_per_s=%.3f "
        "pin_rms=%.3f fit_crossover=%.0f measured_crossover=%d chosen=%d\n",
        who, c.get.latency_us, c.get.us_per_byte > 0 ? 1e-3 / c.get.us_per_byte : 0, c.get.rms_rel_error,
        c.pin.latency_us, c.pin.us_per_byte > 0 ? 1e-3 / c.pin.us_per_byte : 0, c.pin.rms_rel_error,
        std::isfinite(c.fit_crossover) ? c.fit_crossover : -1.0, c.measured_crossover, c.threshold);
  };
  std::map<std::string, uint64_t> per_peer;
  for (const PeerChoice& p : peers) {
    absl::StrAppend(&out, fit_line(absl::StrCat(p.fetcher_node, "<-", p.peer_node), p.choice));
    auto [it, inserted] = per_peer.emplace(p.peer_node, p.choice.threshold);
    if (!inserted) it->second = std::min(it->second, p.choice.threshold);
  }
  absl::StrAppend(&out, fit_line("cluster", cluster));
  for (const auto& [peer, bytes] : per_peer) absl::StrAppend(&out, "peer ", peer, " ", bytes, "\n");
  absl::StrAppend(&out, "default ", cluster.threshold, "\n");
  return out;
}

}  // namespace rplasma::bench
