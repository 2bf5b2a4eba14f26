#include "bench-mpi/mpi/auto_ratio.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench-mpi/common/median.h"
#include "bench-mpi/common/size_units.h"

namespace rplasma::bench {

double AutoVsBest(double get_p50_us, double pin_p50_us, double auto_p50_us) {
  if (!(auto_p50_us > 0)) return -1;
  double best = 0;
  if (get_p50_us > 0) best = get_p50_us;
  if (pin_p50_us > 0) best = best > 0 ? std::min(best, pin_p50_us) : pin_p50_us;
  if (!(best > 0)) return -1;
  return best / auto_p50_us;
}

double PairedAutoVsBest(const std::vector<int64_t>& get_ns, const std::vector<int64_t>& pin_ns,
                        const std::vector<int64_t>& auto_ns) {
  double worst = -1;
  for (const std::vector<int64_t>* fixed : {&get_ns, &pin_ns}) {
    std::vector<double> ratios;
    for (size_t i = 0; i < std::min(fixed->size(), auto_ns.size()); ++i) {
      if ((*fixed)[i] > 0 && auto_ns[i] > 0) ratios.push_back(static_cast<double>((*fixed)[i]) / auto_ns[i]);
    }
    if (ratios.empty()) continue;
    const double median = Median(std::move(ratios));
    if (worst < 0 || median < worst) worst = median;
  }
  return worst;
}

std::string AutoRatioSummary(const std::vector<AutoRatioPoint>& points, double target) {
  std::string out;
  int with_ratio = 0, reached = 0;
  double worst = 0;
  std::string worst_at;
  for (const AutoRatioPoint& p : points) {
    const double medians = AutoVsBest(p.get_p50_us, p.pin_p50_us, p.auto_p50_us);
    const double ratio = p.paired >= 0 ? p.paired : medians;
    if (ratio < 0) continue;
    absl::StrAppend(&out, absl::StrFormat("  %-12s %8s: send %10.1f us  read %10.1f us  auto %10.1f us  "
                                          "auto/best %.3f%s%s\n",
                                          p.label, FormatByteSize(p.size), p.get_p50_us, p.pin_p50_us, p.auto_p50_us,
                                          ratio, p.paired >= 0 ? absl::StrFormat("  medians %.3f", medians) : "",
                                          ratio >= target ? "" : absl::StrFormat("  (< %.2f)", target)));
    if (with_ratio == 0 || ratio < worst) {
      worst = ratio;
      worst_at = absl::StrCat(p.label, " ", FormatByteSize(p.size));
    }
    ++with_ratio;
    if (ratio >= target) ++reached;
  }
  if (with_ratio == 0) return "";
  absl::StrAppend(
      &out, absl::StrFormat("auto/best worst case %.3f (%s), %d of %d points >= %.2f: %s\n", worst, worst_at, reached,
                            with_ratio, target, reached == with_ratio ? "PASS" : "SHORT"));
  return out;
}

}  // namespace rplasma::bench
