#include "manager/fetch/threshold_policy.h"

#include <algorithm>
#include <bit>
#include <optional>

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
  if (min_samples == 0 || min_samples > ThresholdPolicy::kFirstSamples) {
    return invalid(absl::StrCat("min_samples must be in [1, ", ThresholdPolicy::kFirstSamples, "]"));
  }
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

int ThresholdPolicy::ConcurrencyClassOf(size_t objects) {
  if (objects <= 1) return 0;
  if (objects <= 16) return 1;
  if (objects <= 256) return 2;
  return 3;
}

std::string ThresholdPolicy::ConcurrencyClassName(int concurrency_class) {
  static constexpr const char* kNames[kConcurrencyClasses] = {"1", "2-16", "17-256", "257+"};
  return kNames[std::clamp(concurrency_class, 0, kConcurrencyClasses - 1)];
}

ThresholdPolicy::PeerState& ThresholdPolicy::StateLocked(const std::string& peer) {
  auto [it, inserted] = peers_.try_emplace(peer);
  if (inserted) {
    for (int k = 0; k < kConcurrencyClasses; ++k) {
      ClassState& c = it->second.classes[k];
      c.averaged = k >= ConcurrencyClassOf(17);
      c.threshold = options_.setting.table.For(peer);
      switch (options_.setting.mode) {
        case ThresholdSetting::Mode::kAuto: c.reason = "auto: the start value, not calibrated yet"; break;
        case ThresholdSetting::Mode::kFile: c.reason = "file: the threshold file's value for this peer"; break;
        default: c.reason = "fixed: the configured threshold"; break;
      }
    }
  }
  return it->second;
}

ThresholdPolicy::ClassState& ThresholdPolicy::ClassLocked(const std::string& peer, size_t objects) {
  ClassState& c = StateLocked(peer).classes[ConcurrencyClassOf(objects)];
  c.used = true;
  return c;
}

void ThresholdPolicy::MoveTo(ClassState& state, uint64_t threshold, std::string reason) {
  if (threshold != state.threshold) ++state.flips;
  state.threshold = threshold;
  state.reason = std::move(reason);
}

bool ThresholdPolicy::Stale(const ClassState& state, int bucket, int protocol) const {
  const Estimate& e = state.estimates[bucket][protocol];
  return e.samples > 0 && (state.bucket_observations[bucket] - e.seen_at > kStaleObservations ||
                           e.seen_at <= state.refresh_from[bucket]);
}

bool ThresholdPolicy::Usable(const ClassState& state, int bucket, int protocol) const {
  return state.estimates[bucket][protocol].samples >= options_.min_samples && !Stale(state, bucket, protocol);
}

bool ThresholdPolicy::Ready(const ClassState& state, int bucket) const {
  if (bucket < 0 || bucket >= kBuckets) return false;
  return (Usable(state, bucket, 0) && Usable(state, bucket, 1)) || Decisive(state, bucket);
}

bool ThresholdPolicy::Decisive(const ClassState& state, int bucket) const {
  if (!state.averaged || bucket < 0 || bucket >= kBuckets) return false;
  const Estimate& get = state.estimates[bucket][0];
  const Estimate& pin = state.estimates[bucket][1];
  if (get.samples == 0 || pin.samples == 0 || Stale(state, bucket, 0) || Stale(state, bucket, 1)) return false;
  return std::max(get.seconds, pin.seconds) >= kDecisiveRatio * std::min(get.seconds, pin.seconds);
}

bool ThresholdPolicy::FarDearer(const ClassState& state, int bucket, int other) const {
  const Estimate& o = state.estimates[bucket][other];
  const Estimate& used = state.estimates[bucket][1 - other];
  return o.samples > 0 && used.samples > 0 && !Stale(state, bucket, other) && !Stale(state, bucket, 1 - other) &&
         o.seconds >= kFarDearer * used.seconds;
}

bool ThresholdPolicy::ClearlyFaster(double seconds, double than) const {
  return seconds < than * (1 - options_.hysteresis);
}

bool ThresholdPolicy::Contradicted(const ClassState& state, int to, bool up, double margin) const {
  const int t = BucketOf(state.threshold);
  // The buckets the move would switch: up, (t, to] from Pin to Get; down, (to, t] from Get to Pin.
  const int first = up ? t + 1 : to + 1;
  const int last = up ? to : t;
  for (int b = std::max(first, 0); b <= std::min(last, kBuckets - 1); ++b) {
    if (!Ready(state, b)) continue;
    const double get = state.estimates[b][0].seconds;
    const double pin = state.estimates[b][1].seconds;
    if (up ? pin < get * (1 - margin) : get < pin * (1 - margin)) return true;
  }
  return false;
}

bool ThresholdPolicy::ExploreLocked(ClassState& state, uint64_t size, PeerProtocol chosen, bool batch) {
  if (!adaptive() || options_.explore_every == 0) return false;
  const int bucket = BucketOf(size);
  const int other = chosen == PeerProtocol::kGet ? 1 : 0;
  const Estimate& other_estimate = state.estimates[bucket][other];
  // A batch class never measured the other way here: tried at once, a few times (it learns a
  // size's two costs on its first batches of it; the single class starts from the probes'
  // crossover, and a try costs a whole batch's worth of the slower way only for batches once).
  // An averaged class tries it after kOwnBatchesFirst batches of its own way, and no more once
  // the two differ decisively: a new size then costs one batch the slower way, not min_samples
  // of them. Not after one: the first batch of new objects pays for the owner's first touch of
  // their pages (2-4x a later one's cost here), and the way tried second then looked decisively
  // cheaper whichever it was (batches of 100 x 64 KiB went by Pin, 14% dearer, after a first Get
  // at 203 us per object against a second-batch Pin at 56 us). Two samples' estimate is the lower.
  const bool own_first = state.averaged && state.estimates[bucket][1 - other].samples < kOwnBatchesFirst;
  if (batch && other_estimate.samples < options_.min_samples && state.cold_explored[bucket] < kColdExplorations &&
      !own_first && !Decisive(state, bucket)) {
    ++state.cold_explored[bucket];
    return true;
  }
  // Next to the threshold, where the decision could change, both stay fresh; elsewhere the other
  // way is tried again only once its estimate has gone stale (or never filled).
  const int t = BucketOf(state.threshold);
  const bool next_to_threshold = bucket == t || bucket == t + 1;
  // The link changed, and this bucket's cost of the other way is from before: find it out soon.
  const bool far_dearer = FarDearer(state, bucket, other);
  bool refresh = false;
  if (state.refresh_boost > 0) {
    --state.refresh_boost;
    refresh = !next_to_threshold && !Usable(state, bucket, other) && !Decisive(state, bucket) && !far_dearer;
  }
  // After a change of the link, two ways of finding the new crossover in min_samples transfers of
  // a bucket rather than four times as many, at most min_samples tries in all (quick_tries): the
  // first try of a way whose cost here is from before the change is taken at once; and a way whose
  // first fresh costs here are clearly below the fresh cost of the way in use is tried at every
  // decision until it has min_samples (each such try is expected to cost less than the transfer it
  // replaces). A workload cycling over three sizes took 51 transfers to follow a slower request
  // path (netns_link_change_test): six in one bucket to see the change, then one in four of each
  // bucket's decisions for min_samples Gets. Only after a change: on a steady link, a size's first
  // costs of the way in use are its dearest (the first touch of new objects' pages), and trying a
  // way that looked cheaper than them at once let three samples of it move the threshold there
  // for good (bench-mpi gather 1 MiB: 192 of 202 transfers by Pin, 13% dearer; auto 0.825).
  const Estimate& used = state.estimates[bucket][1 - other];
  const auto fresh = [&](int p) { return state.estimates[bucket][p].samples > 0 && !Stale(state, bucket, p); };
  const bool first_since_change = (refresh || next_to_threshold) && !fresh(other);
  const bool promising = fresh(other) && fresh(1 - other) && other_estimate.samples < options_.min_samples &&
                         ClearlyFaster(other_estimate.seconds, used.seconds);
  if (state.refresh_boost > 0 && (first_since_change || promising) &&
      state.quick_tries[bucket] < options_.min_samples) {
    ++state.quick_tries[bucket];
    return true;
  }
  if (!next_to_threshold && !refresh && (Usable(state, bucket, other) || far_dearer)) return false;
  uint64_t every = options_.explore_every;
  // Next to the threshold, quickly until the other way has min_samples costs here (never measured
  // yet: the threshold is the probes' guess; or stale: the link changed), then at the usual rate.
  // Each quick try costs the dearer way's price: a few of them, not a share of the traffic (at
  // 1 in 4 for 256 decisions after a change, a quarter of auto's transfers went the dearer way).
  // At 1 in explore_every only, a probe that misjudged the bucket above the threshold sent about
  // 100 transfers the slower way before the third sample of the other moved it.
  // A single object's size not yet measured the other way, wherever it is: the threshold is the
  // probes' guess, and one that put T a few buckets off (the guest's noisy probes: 16 KiB went
  // 61 of 62 transfers by Pin, 25% dearer) is otherwise found out after ~100 transfers. A few
  // tries each, unless the first already cost far more than the way in use.
  // (At most kColdExplorations tries: a way whose transfers teach nothing, failing, is not tried
  // one in 4 for ever.)
  const bool learning =
      !batch && other_estimate.samples < options_.min_samples && state.cold_explored[bucket] < kColdExplorations &&
      !(other_estimate.samples > 0 && used.samples > 0 && other_estimate.seconds >= kLearnedDearer * used.seconds);
  if ((next_to_threshold && !Usable(state, bucket, other)) || refresh || learning) {
    every = std::min<uint64_t>(every, kBoostedExploreEvery);
  }
  const bool explore = ++state.explore_counts[bucket] % every == 0;
  if (explore && learning) ++state.cold_explored[bucket];
  return explore;
}

ThresholdPolicy::Choice ThresholdPolicy::Decide(const std::string& peer, uint64_t size) {
  MutexLock lock(&mu_);
  ClassState& state = ClassLocked(peer, 1);
  Choice choice;
  choice.threshold = state.threshold;
  choice.protocol = size <= state.threshold ? PeerProtocol::kGet : PeerProtocol::kPin;
  if (size <= peer::kMaxInlineObjectBytes && ExploreLocked(state, size, choice.protocol, /*batch=*/false)) {
    choice.protocol = choice.protocol == PeerProtocol::kGet ? PeerProtocol::kPin : PeerProtocol::kGet;
    choice.explored = true;
  }
  return choice;
}

ThresholdPolicy::Choice ThresholdPolicy::DecideBatch(const std::string& peer, size_t objects, uint64_t min_size,
                                                     uint64_t max_size) {
  MutexLock lock(&mu_);
  ClassState& state = ClassLocked(peer, objects);
  Choice choice;
  choice.threshold = state.threshold;
  choice.protocol = max_size <= state.threshold ? PeerProtocol::kGet : PeerProtocol::kPin;
  // Only a batch wholly on one side of the threshold, in one size bucket, can be sent the other
  // way as a whole (and then teaches its class that protocol's cost).
  const bool uniform = min_size > 0 && min_size <= max_size && BucketOf(min_size) == BucketOf(max_size) &&
                       (max_size <= state.threshold || min_size > state.threshold);
  if (!uniform || (choice.protocol == PeerProtocol::kPin && max_size > peer::kMaxInlineObjectBytes)) return choice;
  if (ExploreLocked(state, max_size, choice.protocol, /*batch=*/objects > 1)) {
    choice.explored = true;
    choice.protocol = choice.protocol == PeerProtocol::kGet ? PeerProtocol::kPin : PeerProtocol::kGet;
    choice.threshold = choice.protocol == PeerProtocol::kGet ? max_size : min_size - 1;
  }
  return choice;
}

uint64_t ThresholdPolicy::ThresholdFor(const std::string& peer, size_t objects) const {
  MutexLock lock(&mu_);
  if (auto it = peers_.find(peer); it != peers_.end()) {
    return it->second.classes[ConcurrencyClassOf(objects)].threshold;
  }
  return options_.setting.table.For(peer);
}

uint64_t ThresholdPolicy::BatchThreshold(const std::string& peer, size_t objects) {
  MutexLock lock(&mu_);
  return ClassLocked(peer, objects).threshold;
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
  PeerState& peer_state = StateLocked(peer);
  peer_state.calibrated = true;
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
  // The probes move one object at a time: their costs are the single class's estimates. Every
  // class starts from their crossover and then follows its own transfers.
  for (int c = 0; c < kConcurrencyClasses; ++c) {
    MoveTo(peer_state.classes[c], Clamp(threshold),
           c == 0 ? reason : absl::StrCat(reason, " (single-object probes; no batch of this class moved it since)"));
  }
  // The probes' costs set no estimate: they move no store work (a Get probe creates nothing, a Pin
  // probe reads into a scratch object), so they are not the costs of transfers; each class
  // measures its own (ExploreLocked).
}

void ThresholdPolicy::Observe(const std::string& peer, PeerProtocol protocol, uint64_t size, absl::Duration time,
                              size_t objects) {
  if (!adaptive()) return;
  MutexLock lock(&mu_);
  ClassState& state = ClassLocked(peer, objects);
  const int b = BucketOf(size);
  const double scale = static_cast<double>(uint64_t{1} << b) / static_cast<double>(std::max<uint64_t>(size, 1));
  const int p = protocol == PeerProtocol::kGet ? 0 : 1;
  Estimate& e = state.estimates[b][p];
  const double seconds = absl::ToDoubleSeconds(time) * scale;
  // A cost far from its estimate says the link may have changed. One alone does not: on a busy
  // machine every tenth transfer or so pays a wake-up that doubles it, and exploring more after
  // each would make the dearer way's cost a lasting share of auto's next to the crossover.
  const auto far = [&](double estimate) { return seconds > 2 * estimate || 2 * seconds < estimate; };
  const bool estimated = Usable(state, b, p);
  // kChangeSurprises such costs in a row, each far from the estimate the first of them met: the
  // link did change.
  bool changed = false;
  const double base = state.surprises[b] == 0 ? e.seconds : state.surprise_base[b];
  if (estimated && far(base)) {
    if (state.surprises[b]++ == 0) state.surprise_base[b] = e.seconds;
    ++state.class_surprises;
    changed = state.surprises[b] >= kChangeSurprises || state.class_surprises >= kChangeSurprises;
  } else {
    state.surprises[b] = 0;
    if (estimated) state.class_surprises = 0;
  }
  // So did it when this estimate moved kDriftRatio away from what it was when the other way's was
  // last measured: a change this way feels less than 2x (no surprise) may have changed the other
  // way's cost many times over, and away from the threshold nothing else would measure it again
  // (one that was far dearer has a sample only: FarDearer left it at that).
  const Estimate& other = state.estimates[b][1 - p];
  if (estimated && other.partner_then > 0 && (Usable(state, b, 1 - p) || FarDearer(state, b, 1 - p)) &&
      (e.seconds >= kDriftRatio * other.partner_then || kDriftRatio * e.seconds <= other.partner_then)) {
    changed = true;
  }
  if (changed) {  // every estimate so far predates it (Stale); find the new costs out soon
    state.surprises[b] = 0;
    state.class_surprises = 0;
    state.quick_tries = {};
    ++state.link_changes;
    state.refresh_boost = kBoostDecisions;
    state.refresh_from = state.bucket_observations;
  }
  ++state.bucket_observations[b];
  // A far cost that is not (yet) a change of the link moves no estimate: a wake-up spike is one,
  // and counted, four in a row carried an estimate 1.5x up, which looked like a drift of the
  // link; while a streak does grow into a change, the estimate it rose would be weighed against
  // the other way's from the old link (a link 3x dearer throughout moved the threshold from 64 to
  // 16 KiB that way). A change restarts every estimate with the new link's costs.
  if (state.surprises[b] > 0) return;
  if (Stale(state, b, p)) {  // the cost of a link that may be gone: start afresh
    e = Estimate{};
    state.quick_tries[b] = 0;
  }
  // One slow transfer (a wake-up of a descheduled vCPU costs 50-80 us) counts as at most 1.5x the
  // estimate, so a spike cannot carry the estimate across the hysteresis; a lasting rise still
  // gets through, 10% a transfer. Until it has min_samples the estimate is the (lower) median of
  // its costs: a new estimate that began with a spike stood at 2.5x the cost for dozens of
  // transfers (enough to look like a drift of the link: see kDriftRatio), and the least cost would
  // weigh a lucky minimum of the way explored against the other's typical cost.
  if (e.samples < options_.min_samples) {
    const size_t n = std::min<size_t>(e.samples + 1, kFirstSamples);  // min_samples <= kFirstSamples
    size_t k = n - 1;                                                 // kept sorted: insert this cost in its place
    for (; k > 0 && e.first[k - 1] > seconds; --k) e.first[k] = e.first[k - 1];
    e.first[k] = seconds;
    e.seconds = e.first[(n - 1) / 2];
  } else {
    const double counted = std::min(seconds, kMaxRise * e.seconds);
    e.seconds = (1 - options_.ewma_alpha) * e.seconds + options_.ewma_alpha * counted;
  }
  ++e.samples;
  e.seen_at = state.bucket_observations[b];
  e.partner_then = Usable(state, b, 1 - p) ? other.seconds : 0;
  AdaptLocked(state, b);
}

std::optional<uint64_t> ThresholdPolicy::FittedCrossover(const ClassState& state) const {
  // Per protocol, the least-squares line cost = fixed + per_byte * bytes through the size classes
  // with min_samples (each estimate is the cost of an object of the class's top size).
  struct Line {
    double fixed = 0, per_byte = 0;
  };
  auto fit = [&](int protocol) -> std::optional<Line> {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const Estimate& e = state.estimates[b][protocol];
      if (!Usable(state, b, protocol)) continue;
      const double x = static_cast<double>(uint64_t{1} << b);
      n += 1;
      sx += x;
      sy += e.seconds;
      sxx += x * x;
      sxy += x * e.seconds;
    }
    const double d = n * sxx - sx * sx;
    if (n < 2 || d <= 0) return std::nullopt;
    Line line;
    line.per_byte = (n * sxy - sx * sy) / d;
    line.fixed = (sy - line.per_byte * sx) / n;
    return line;
  };
  const std::optional<Line> get = fit(0);
  const std::optional<Line> pin = fit(1);
  if (!get.has_value() || !pin.has_value()) return std::nullopt;
  if (get->per_byte <= pin->per_byte) return std::nullopt;  // the lines do not cross for large sizes
  const double x = (pin->fixed - get->fixed) / (get->per_byte - pin->per_byte);
  if (x < 1) return options_.min_threshold;
  // The largest power of two where Get is no slower.
  return uint64_t{1} << std::min(kBuckets - 1, static_cast<int>(std::bit_width(static_cast<uint64_t>(x))) - 1);
}

void ThresholdPolicy::MoveToward(ClassState& state, uint64_t step, bool up, std::string why) {
  // The evidence next to T said which way; the costs fitted over every size class say how far (a
  // link that changed a lot is followed in one move, not a class at a time). Fitted only here,
  // when a move is due, not on every observation. A line is a guess between the sizes it was fitted
  // to: a bucket on the way whose own ready estimates say the other way, by any margin, stops it
  // (bench-mpi broadcast 1 MiB: Get 462 us against Pin 492 us there, but lines through 1, 4 and
  // 16 MiB crossed at 512 KiB, and the lowering from 4 MiB went past it; auto 0.942 of Get).
  const std::optional<uint64_t> fitted = FittedCrossover(state);
  const bool farther = fitted.has_value() && (up ? *fitted > step : *fitted < step) &&
                       !Contradicted(state, BucketOf(*fitted), up, /*margin=*/0);
  if (farther) absl::StrAppend(&why, "; the costs fitted over all sizes cross at ", FormatByteSize(*fitted));
  MoveTo(state, Clamp(farther ? *fitted : step), std::move(why));
}

void ThresholdPolicy::AdaptLocked(ClassState& state, int bucket) {
  const int t = BucketOf(state.threshold);
  const double h = options_.hysteresis;
  if (Ready(state, t + 1)) {
    const auto& e = state.estimates[t + 1];
    if (ClearlyFaster(e[0].seconds, e[1].seconds)) {  // Get clearly faster above T: raise T
      const uint64_t step = uint64_t{1} << (t + 1);
      MoveToward(
          state, step, /*up=*/true,
          absl::StrFormat("raised: Get %.1f us against Pin %.1f us per object of up to %s, more than %.0f%% faster",
                          e[0].seconds * 1e6, e[1].seconds * 1e6, FormatByteSize(step), h * 100));
      return;
    }
  }
  if (t > 0 && Ready(state, t)) {
    const auto& e = state.estimates[t];
    if (ClearlyFaster(e[1].seconds, e[0].seconds)) {  // Pin clearly faster at T: lower T
      MoveToward(
          state, uint64_t{1} << (t - 1), /*up=*/false,
          absl::StrFormat("lowered: Pin %.1f us against Get %.1f us per object of up to %s, more than %.0f%% faster",
                          e[1].seconds * 1e6, e[0].seconds * 1e6, FormatByteSize(uint64_t{1} << t), h * 100));
      return;
    }
  }
  // Farther from T: what the bucket just measured both ways, unless a bucket in between says the
  // opposite (costs that do not cross once: the threshold stays where most of them agree).
  if (bucket == t || bucket == t + 1 || !Ready(state, bucket)) return;
  const auto& e = state.estimates[bucket];
  if (bucket > 0 && bucket < t && ClearlyFaster(e[1].seconds, e[0].seconds) &&
      !Contradicted(state, bucket - 1, /*up=*/false, options_.hysteresis)) {  // Pin clearly faster well below T
    MoveToward(state, uint64_t{1} << (bucket - 1), /*up=*/false,
               absl::StrFormat("lowered: Pin %.1f us against Get %.1f us per object of up to %s (below the "
                               "threshold %s), more than %.0f%% faster",
                               e[1].seconds * 1e6, e[0].seconds * 1e6, FormatByteSize(uint64_t{1} << bucket),
                               FormatByteSize(state.threshold), h * 100));
  } else if (bucket > t + 1 && ClearlyFaster(e[0].seconds, e[1].seconds) &&
             !Contradicted(state, bucket, /*up=*/true, options_.hysteresis)) {  // Get clearly faster well above T
    MoveToward(state, uint64_t{1} << bucket, /*up=*/true,
               absl::StrFormat("raised: Get %.1f us against Pin %.1f us per object of up to %s (above the "
                               "threshold %s), more than %.0f%% faster",
                               e[0].seconds * 1e6, e[1].seconds * 1e6, FormatByteSize(uint64_t{1} << bucket),
                               FormatByteSize(state.threshold), h * 100));
  }
}

std::map<std::string, uint64_t> ThresholdPolicy::Snapshot() const {
  MutexLock lock(&mu_);
  std::map<std::string, uint64_t> out;
  for (const auto& [peer, state] : peers_) out[peer] = state.classes[0].threshold;
  return out;
}

PeerExplanation ThresholdPolicy::ExplainClass(const ClassState& state, int concurrency_class) {
  PeerExplanation e;
  e.objects = ConcurrencyClassName(concurrency_class);
  e.threshold = state.threshold;
  e.flips = state.flips;
  e.link_changes = state.link_changes;
  e.reason = state.reason;
  for (int b = 0; b < kBuckets; ++b) {
    const Estimate& get = state.estimates[b][0];
    const Estimate& pin = state.estimates[b][1];
    if (get.samples == 0 && pin.samples == 0) continue;
    e.estimates.push_back(
        PeerExplanation::SizeClass{uint64_t{1} << b, get.seconds * 1e6, get.samples, pin.seconds * 1e6, pin.samples});
  }
  return e;
}

std::map<std::string, PeerExplanation> ThresholdPolicy::Explain() const {
  MutexLock lock(&mu_);
  std::map<std::string, PeerExplanation> out;
  for (const auto& [peer, state] : peers_) {
    PeerExplanation e = ExplainClass(state.classes[0], 0);
    for (int c = 1; c < kConcurrencyClasses; ++c) {
      if (state.classes[c].used) e.batches.push_back(ExplainClass(state.classes[c], c));
    }
    out[peer] = std::move(e);
  }
  return out;
}

}  // namespace rplasma::fetch
