#include "manager/fetch/threshold_policy.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "manager/peer/peer_messages.h"
#include "protocol/base/byte_size.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {

absl::Status ThresholdPolicyOptions::Validate() const {
  auto invalid = [](absl::string_view m) { return MakeError(ErrorCode::kInvalidArgument, m); };
  if (!(ewma_alpha > 0 && ewma_alpha <= 1)) return invalid("ewma_alpha must be in (0, 1]");
  if (!(hysteresis >= 0 && hysteresis < 1)) return invalid("hysteresis must be in [0, 1)");
  if (min_samples == 0) return invalid("min_samples must be positive");
  if (min_threshold == 0 || min_threshold > max_threshold) return invalid("need 0 < min_threshold <= max_threshold");
  return absl::OkStatus();
}

ThresholdPolicy::ThresholdPolicy(ThresholdPolicyOptions options) : options_(std::move(options)) {}

int ThresholdPolicy::BucketOf(uint64_t size) {
  // ceil(log2(size)): bucket b holds (2^(b-1), 2^b]; sizes 0 and 1 are bucket 0.
  const int b = size <= 1 ? 0 : static_cast<int>(std::bit_width(size - 1));
  return std::min(b, kBuckets - 1);
}

uint64_t ThresholdPolicy::Clamp(uint64_t threshold) const {
  return std::clamp(threshold, options_.min_threshold, options_.max_threshold);
}

ThresholdPolicy::PeerState& ThresholdPolicy::StateLocked(const std::string& peer) {
  auto [it, inserted] = peers_.try_emplace(peer);
  if (inserted) {
    it->second.threshold = options_.setting.table.For(peer);
    switch (options_.setting.mode) {
      case ThresholdSetting::Mode::kAuto: it->second.reason = "auto: the start value, not calibrated yet"; break;
      case ThresholdSetting::Mode::kFile: it->second.reason = "file: the threshold file's value for this peer"; break;
      default: it->second.reason = "fixed: the configured threshold"; break;
    }
  }
  return it->second;
}

void ThresholdPolicy::MoveTo(PeerState& state, uint64_t threshold, std::string reason) {
  if (threshold != state.threshold) ++state.flips;
  state.threshold = threshold;
  state.reason = std::move(reason);
}

ThresholdPolicy::Choice ThresholdPolicy::Decide(const std::string& peer, uint64_t size) {
  MutexLock lock(&mu_);
  PeerState& state = StateLocked(peer);
  Choice choice;
  choice.threshold = state.threshold;
  choice.protocol = size <= state.threshold ? PeerProtocol::kGet : PeerProtocol::kPin;
  if (adaptive() && options_.explore_every > 0) {
    // Explore only next to the threshold, where the decision could change.
    const int bucket = BucketOf(size);
    const int t = BucketOf(state.threshold);
    if ((bucket == t || bucket == t + 1) && ++state.explore_counter % options_.explore_every == 0 &&
        size <= peer::kMaxInlineObjectBytes) {
      choice.protocol = choice.protocol == PeerProtocol::kGet ? PeerProtocol::kPin : PeerProtocol::kGet;
      choice.explored = true;
    }
  }
  return choice;
}

uint64_t ThresholdPolicy::ThresholdFor(const std::string& peer) const {
  MutexLock lock(&mu_);
  if (auto it = peers_.find(peer); it != peers_.end()) return it->second.threshold;
  return options_.setting.table.For(peer);
}

uint64_t ThresholdPolicy::BatchThreshold(const std::string& peer) {
  MutexLock lock(&mu_);
  return StateLocked(peer).threshold;
}

bool ThresholdPolicy::Calibrated(const std::string& peer) const {
  MutexLock lock(&mu_);
  auto it = peers_.find(peer);
  return it != peers_.end() && it->second.calibrated;
}

void ThresholdPolicy::Calibrate(const std::string& peer, const std::vector<ProbeSample>& samples) {
  if (!adaptive()) return;
  std::vector<ProbeSample> sorted = samples;
  std::sort(sorted.begin(), sorted.end(), [](const ProbeSample& a, const ProbeSample& b) { return a.bytes < b.bytes; });
  MutexLock lock(&mu_);
  PeerState& state = StateLocked(peer);
  state.calibrated = true;
  if (sorted.empty()) return;
  // Crossover: the largest size below the first size where Pin wins.
  uint64_t threshold = sorted.back().bytes;
  std::string reason =
      absl::StrCat("calibrated: Get was at least as fast as Pin at every probe, up to ", FormatByteSize(threshold));
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].pin_time < sorted[i].get_time) {
      threshold = i == 0 ? sorted[0].bytes / 2 : sorted[i - 1].bytes;
      reason = absl::StrFormat("calibrated: Pin beat Get from the %s probe (%.1f us against %.1f us)",
                               FormatByteSize(sorted[i].bytes), absl::ToDoubleMicroseconds(sorted[i].pin_time),
                               absl::ToDoubleMicroseconds(sorted[i].get_time));
      break;
    }
  }
  MoveTo(state, Clamp(threshold), std::move(reason));
  for (const ProbeSample& s : sorted) {
    const int b = BucketOf(s.bytes);
    const double scale = static_cast<double>(uint64_t{1} << b) / static_cast<double>(std::max<uint64_t>(s.bytes, 1));
    state.estimates[b][0] = Estimate{absl::ToDoubleSeconds(s.get_time) * scale, options_.min_samples};
    state.estimates[b][1] = Estimate{absl::ToDoubleSeconds(s.pin_time) * scale, options_.min_samples};
  }
}

void ThresholdPolicy::Observe(const std::string& peer, PeerProtocol protocol, uint64_t size, absl::Duration time) {
  if (!adaptive()) return;
  MutexLock lock(&mu_);
  PeerState& state = StateLocked(peer);
  const int b = BucketOf(size);
  const double scale = static_cast<double>(uint64_t{1} << b) / static_cast<double>(std::max<uint64_t>(size, 1));
  Estimate& e = state.estimates[b][protocol == PeerProtocol::kGet ? 0 : 1];
  const double seconds = absl::ToDoubleSeconds(time) * scale;
  e.seconds = e.samples == 0 ? seconds : (1 - options_.ewma_alpha) * e.seconds + options_.ewma_alpha * seconds;
  ++e.samples;
  AdaptLocked(state);
}

void ThresholdPolicy::AdaptLocked(PeerState& state) {
  const int t = BucketOf(state.threshold);
  auto ready = [&](int b) {
    return b >= 0 && b < kBuckets && state.estimates[b][0].samples >= options_.min_samples &&
           state.estimates[b][1].samples >= options_.min_samples;
  };
  const double h = options_.hysteresis;
  if (ready(t + 1)) {
    const auto& e = state.estimates[t + 1];
    if (e[0].seconds < e[1].seconds * (1 - h)) {  // Get clearly faster above T: raise T
      MoveTo(state, Clamp(uint64_t{1} << (t + 1)),
             absl::StrFormat("raised: Get %.1f us against Pin %.1f us per object of up to %s, more than %.0f%% faster",
                             e[0].seconds * 1e6, e[1].seconds * 1e6, FormatByteSize(uint64_t{1} << (t + 1)), h * 100));
      return;
    }
  }
  if (ready(t) && t > 0) {
    const auto& e = state.estimates[t];
    if (e[1].seconds < e[0].seconds * (1 - h)) {  // Pin clearly faster at T: lower T
      MoveTo(state, Clamp(uint64_t{1} << (t - 1)),
             absl::StrFormat("lowered: Pin %.1f us against Get %.1f us per object of up to %s, more than %.0f%% faster",
                             e[1].seconds * 1e6, e[0].seconds * 1e6, FormatByteSize(uint64_t{1} << t), h * 100));
    }
  }
}

std::map<std::string, uint64_t> ThresholdPolicy::Snapshot() const {
  MutexLock lock(&mu_);
  std::map<std::string, uint64_t> out;
  for (const auto& [peer, state] : peers_) out[peer] = state.threshold;
  return out;
}

std::map<std::string, PeerExplanation> ThresholdPolicy::Explain() const {
  MutexLock lock(&mu_);
  std::map<std::string, PeerExplanation> out;
  for (const auto& [peer, state] : peers_) {
    PeerExplanation& e = out[peer];
    e.threshold = state.threshold;
    e.flips = state.flips;
    e.reason = state.reason;
    for (int b = 0; b < kBuckets; ++b) {
      const Estimate& get = state.estimates[b][0];
      const Estimate& pin = state.estimates[b][1];
      if (get.samples == 0 && pin.samples == 0) continue;
      e.estimates.push_back(
          PeerExplanation::SizeClass{uint64_t{1} << b, get.seconds * 1e6, get.samples, pin.seconds * 1e6, pin.samples});
    }
  }
  return out;
}

}  // namespace rplasma::fetch
