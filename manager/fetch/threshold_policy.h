// ThresholdPolicy: which peer protocol moves an object of a given size from a given peer.
//
//   size <= threshold(peer)  -> kGet  (two-sided: bytes inline in the reply, one copy)
//   size >  threshold(peer)  -> kPin  (one-sided: Pin, Read straight into the new object, Unpin)
//
// Peers are node ids ("rank1.3fa9c2d1"); a file's peer line matches the exact id or, as the tuner
// writes them, the node name (ThresholdTable::For).
// Fixed/file modes: threshold(peer) is the table's per-peer value or its default, forever.
// Adaptive (auto) mode, pure logic — callers feed it measurements, it never reads a clock:
//   * Calibrate(peer, probes): the probe's crossover (largest probed size where Get was at least
//     as fast as Pin) becomes the peer's threshold. Probes set no estimate: they move no store
//     work, so their costs are not the costs of transfers.
//   * Observe(peer, protocol, size, time): an EWMA of the time per protocol per size bucket
//     (bucket b holds sizes in (2^(b-1), 2^b]; times are scaled to the bucket's top size); one
//     observation counts as at most 1.5x the estimate, so a single slow transfer (a wake-up spike)
//     moves it by 10% at most, and one at least 2x away moves it not at all (unless it is the
//     sixth in a row: see Ageing). A new estimate is the median of its first min_samples costs.
//   * Hysteresis: the threshold T = 2^k moves up only when Get beat Pin in bucket k+1 by more than
//     `hysteresis` (relative), down only when Pin beat Get in bucket k by as much; both estimates
//     need min_samples. It moves one bucket, or further in that direction to where lines fitted
//     to each protocol's estimates over all buckets cross (a big change of the link is followed
//     in one move). A bucket farther from T whose two estimates contradict it by as much moves it
//     past that bucket, unless a bucket in between says the opposite (no flapping between costs
//     that do not cross once).
//   * Exploration: one transfer in `explore_every` of each of the two buckets next to T uses the
//     other protocol (one in 4 until the other way has min_samples there: never measured, or stale
//     since the link changed), and so does one in `explore_every` of any bucket whose
//     estimate of the other protocol is missing or stale (one in 4 for a while after the link
//     changed: see Ageing); a batch class tries it at once there
//     (up to kColdExplorations times), having no probe of its own, and a single object's bucket
//     anywhere learns it one transfer in 4 until it has min_samples (or one sample of it cost
//     kLearnedDearer times the way in use: the probes set no estimate, and a probe that put T a
//     few buckets off left sizes there going the dearer way for ~100 transfers); a class of 17+
//     objects per transfer first runs kOwnBatchesFirst (2) batches its own way (the first of new
//     objects pays the owner's first touch of their pages), and stops trying once the two ways'
//     estimates, of one sample or more, differ by kDecisiveRatio (a batch's cost is an average
//     over its objects). Away from T, a bucket whose fresh cost of the other way is kFarDearer (4)
//     times the fresh cost of the way in use is not tried again until one of them goes stale (or
//     the link changes): one sample says the choice is right there, and each try costs that much.
//     For a while after the link changed, a bucket tries the other way at once (its first decision,
//     not its fourth) and then at every decision while that way's first fresh costs are clearly
//     below the way in use, until it has min_samples (at most min_samples such tries a bucket).
//   * Ageing: away from T only one protocol runs, so the other's estimate keeps an old link's
//     cost. An estimate not updated in kStaleObservations transfers of its bucket, or since the
//     link changed, is stale: it counts for no move, is explored one in `explore_every`, and its
//     next sample starts it afresh. The link changed when kChangeSurprises costs in a row, of one
//     size bucket or of any of the class's, were at least 2x away from their estimate (a link that
//     changed surprises every size at once), or when an estimate moved kDriftRatio away from what it
//     was when the other protocol's estimate of its bucket was last measured (a change one way
//     feels less than 2x can change the other way's cost many times over).
// Concurrency: a transfer of n objects at once (a batch) costs each object differently from a
// transfer of one, so each peer keeps one threshold and one set of estimates per concurrency class
// (objects per transfer: 1, 2-16, 17-256, 257 and more). Single objects use the class of 1
// (Decide, Observe); a batch the class of its size (DecideBatch, Observe with its object count).
// Every class starts at the setting's value and takes the calibration's crossover; each then moves
// by its own estimates. A batch teaches its class only when its objects share one size bucket and
// one protocol (its time per object is then that protocol's cost at that size); a batch explores
// like a single object, as a whole.
// Explain(): per peer, the threshold, how often it moved, why (the setting, the calibration's
// crossover, or the estimates that moved it), and the estimates behind it; the same for each batch
// class that was used.
//
// Thread-safety: thread-safe.
#ifndef RPLASMA_MANAGER_FETCH_THRESHOLD_POLICY_H_
#define RPLASMA_MANAGER_FETCH_THRESHOLD_POLICY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "manager/fetch/threshold_file.h"
#include "manager/peer/peer_protocol.h"

namespace rplasma::fetch {

using peer::PeerProtocol;
using peer::PeerProtocolName;

struct ThresholdPolicyOptions {
  ThresholdSetting setting;       // mode and table (default + per-peer)
  double ewma_alpha = 0.2;        // weight of a new observation
  double hysteresis = 0.15;       // relative margin before the threshold moves
  uint32_t min_samples = 3;       // per protocol per bucket before it counts
  uint32_t explore_every = 32;    // 0 = never explore
  uint64_t min_threshold = 1024;  // adaptive thresholds stay within [min, max]
  uint64_t max_threshold = 64u << 20;

  absl::Status Validate() const;
};

// One probe size measured both ways (auto calibration).
struct ProbeSample {
  uint64_t bytes = 0;
  absl::Duration get_time;
  absl::Duration pin_time;  // Pin + Read + Unpin
};

// Why a peer's threshold is what it is (the manager's stats: "peer_policy"; /metrics).
struct PeerExplanation {
  std::string objects = "1";  // the concurrency class: objects per transfer ("1", "2-16", ...)
  uint64_t threshold = 0;
  uint64_t flips = 0;         // times the threshold moved (a calibration that changed it included)
  uint64_t link_changes = 0;  // changes of the link seen (costs far from their estimates, in a row)
  std::string reason;         // why it has its current value, in words
  // The estimates behind it: the size classes with a sample of either protocol, smallest first;
  // times are per object of the class's top size (`bytes`), as Observe scales them.
  struct SizeClass {
    uint64_t bytes = 0;
    double get_us = 0;
    uint32_t get_samples = 0;
    double pin_us = 0;
    uint32_t pin_samples = 0;
  };
  std::vector<SizeClass> estimates;
  // The batch classes this peer's transfers used (objects != "1"), smallest first; each without
  // its own `batches`.
  std::vector<PeerExplanation> batches;
};

class ThresholdPolicy {
 public:
  static constexpr int kBuckets = 48;
  static constexpr int kConcurrencyClasses = 4;
  // The most samples an estimate takes the median of before its EWMA starts (min_samples' limit).
  static constexpr uint32_t kFirstSamples = 8;

  explicit ThresholdPolicy(ThresholdPolicyOptions options);

  bool adaptive() const { return options_.setting.mode == ThresholdSetting::Mode::kAuto; }
  ThresholdSetting::Mode mode() const { return options_.setting.mode; }
  // The threshold for a peer without a per-peer value (auto: the start value before calibration).
  uint64_t default_threshold() const { return options_.setting.table.default_bytes; }
  // The protocol for `size` bytes from `peer`, the threshold it was chosen by, and whether it is an
  // exploration of the other protocol (may explore, hence not const).
  struct Choice {
    PeerProtocol protocol = PeerProtocol::kGet;
    uint64_t threshold = 0;
    bool explored = false;
  };
  Choice Decide(const std::string& peer, uint64_t size);
  PeerProtocol Choose(const std::string& peer, uint64_t size) { return Decide(peer, size).protocol; }
  uint64_t ThresholdFor(const std::string& peer, size_t objects = 1) const;
  // The inline limit of a transfer of `objects` objects from `peer` whose sizes are not all known
  // here (the owner applies it to each object's true size): nothing explores. Makes `peer` known.
  uint64_t BatchThreshold(const std::string& peer, size_t objects = 1);
  // The inline limit of a batch of `objects` objects from `peer` with hinted sizes in
  // [min_size, max_size] (min_size 0: some unknown): the class's threshold, or, when exploring
  // (the whole batch on one side of the threshold and in the bucket next to it), the limit that
  // sends the whole batch the other way. `protocol` is what a uniform batch goes by.
  Choice DecideBatch(const std::string& peer, size_t objects, uint64_t min_size, uint64_t max_size);
  // True once Calibrate ran for `peer` (auto mode calibrates each peer once).
  bool Calibrated(const std::string& peer) const;
  // Sets the peer's threshold from probe samples (sorted by size or not). Ignored unless adaptive.
  void Calibrate(const std::string& peer, const std::vector<ProbeSample>& samples);
  // Records one transfer of `objects` objects of about `size` bytes each (one size bucket, one
  // protocol), `time` per object; adaptive mode may move the threshold of that concurrency class.
  void Observe(const std::string& peer, PeerProtocol protocol, uint64_t size, absl::Duration time, size_t objects = 1);

  // The concurrency class of a transfer of `objects` objects (0 for one), and its name.
  static int ConcurrencyClassOf(size_t objects);
  static std::string ConcurrencyClassName(int concurrency_class);

  // peer -> current threshold (single objects), for stats.
  std::map<std::string, uint64_t> Snapshot() const;
  // peer -> its threshold, how often it moved, why, and the estimates behind it.
  std::map<std::string, PeerExplanation> Explain() const;
  static int BucketOf(uint64_t size);

 private:
  struct Estimate {
    double seconds = 0;
    uint32_t samples = 0;
    std::array<double, kFirstSamples> first{};  // its first min_samples costs, sorted (Observe)
    uint64_t seen_at = 0;                       // its bucket's observation count when it last changed
    double partner_then = 0;                    // the other protocol's estimate then (0: none usable)
  };
  // One concurrency class of a peer.
  struct ClassState {
    bool used = false;  // a transfer of this class was decided or observed
    // A class of 17 or more objects per transfer: each of its samples is a cost averaged over many
    // objects (no lone wake-up spike), so one sample each way may decide when they differ by far.
    bool averaged = false;
    uint64_t threshold = 0;
    // Decisions per size bucket: each of the two buckets next to the threshold is explored every
    // explore_every-th of its own (one shared count can alias with a regular mix of sizes and
    // explore only one of them).
    std::array<uint64_t, kBuckets> explore_counts{};
    // Surprising costs in a row per size bucket. kChangeSurprises of them, each far from the
    // estimate the first met, say the link changed (wake-up spikes, and the 2x swings of a
    // contended machine, rarely make six in a row): every estimate not updated since (its bucket's observation count
    // then is refresh_from) is stale, and for refresh_boost decisions a bucket away from the
    // threshold explores the protocol it does not use every kBoostedExploreEvery until that
    // estimate has min_samples again (an averaged class: until one sample each way decides), so that a crossover that
    // moved far is found at once, and no cost of the old link moves the threshold meanwhile.
    std::array<uint8_t, kBuckets> surprises{};
    std::array<double, kBuckets> surprise_base{};  // the estimate the first of them met
    // Far costs in a row across the class's buckets: a link that changed surprises every size at
    // once, and a workload cycling over three sizes took three times as long to show six in one.
    uint8_t class_surprises = 0;
    uint64_t link_changes = 0;
    uint32_t refresh_boost = 0;
    std::array<uint64_t, kBuckets> refresh_from{};
    // Batches per size bucket sent the other way at once because that way had fewer than
    // min_samples (a class with no estimate there learns it on its first transfers of the size),
    // or, for single objects, tried one in kBoostedExploreEvery while learning it; at most
    // kColdExplorations each.
    std::array<uint8_t, kBuckets> cold_explored{};
    // Tries per size bucket taken at once rather than one in kBoostedExploreEvery (ExploreLocked:
    // the first after a change of the link, and those of a way whose first fresh costs are clearly
    // cheaper than the way in use); fewer than min_samples each since the link last changed or the
    // bucket's other estimate last started afresh.
    std::array<uint8_t, kBuckets> quick_tries{};
    // Observations per size bucket: the clock estimates age by (Estimate::seen_at).
    std::array<uint64_t, kBuckets> bucket_observations{};
    uint64_t flips = 0;
    std::string reason;
    std::array<std::array<Estimate, 2>, kBuckets> estimates{};  // [bucket][protocol]
  };
  struct PeerState {
    bool calibrated = false;
    std::array<ClassState, kConcurrencyClasses> classes;
  };

  PeerState& StateLocked(const std::string& peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ClassState& ClassLocked(const std::string& peer, size_t objects) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An observation counts as at most this times the estimate (Observe).
  static constexpr double kMaxRise = 1.5;
  // A change of the link makes buckets away from the threshold refresh their stale estimates for
  // this many decisions.
  static constexpr uint32_t kBoostDecisions = 256;
  // A bucket next to the threshold without min_samples of the other way (or refreshing), and a
  // single object's bucket anywhere still learning the other way (ExploreLocked), explores one
  // transfer in this many.
  static constexpr uint64_t kBoostedExploreEvery = 4;
  // A single object's bucket stops learning the other way quickly once a sample of it costs this
  // many times the way in use (it is far from crossing: 16 MiB by Get 15x Pin on loopback).
  static constexpr double kLearnedDearer = 2.0;
  // Away from the threshold, a bucket whose fresh cost of the other way is this many times the
  // fresh cost of the way in use is not explored again until one of them goes stale (FarDearer):
  // one sample says enough there (16 MiB by Get 15x Pin on loopback; each try costs that much).
  static constexpr double kFarDearer = 4.0;
  // A batch class's bucket with fewer than min_samples of the other way tries it at once, at most
  // this many times.
  static constexpr uint8_t kColdExplorations = 6;
  // ...and not before this many batches of its own way there (an averaged class: ExploreLocked).
  static constexpr uint32_t kOwnBatchesFirst = 2;
  // Surprising costs in a row in one bucket that mark a change of the link (Observe).
  static constexpr uint8_t kChangeSurprises = 6;
  // An estimate this many times (or this fraction of) what it was when the other protocol's estimate
  // of its bucket was last measured marks a change of the link too (Observe).
  static constexpr double kDriftRatio = 1.5;
  // An averaged class's bucket is decided by one sample each way when one costs this many times
  // the other (twice the default hysteresis; 256 KiB batches on loopback TCP: 1.4-1.5x).
  static constexpr double kDecisiveRatio = 1.3;
  // An estimate not updated within this many observations of its bucket is stale: it counts for
  // no move, is explored again (one in explore_every), and its next sample starts it afresh. Away
  // from the threshold only one protocol runs, so the other's estimate keeps the old link's cost.
  static constexpr uint64_t kStaleObservations = 256;
  bool Stale(const ClassState& state, int bucket, int protocol) const;
  // The estimate has min_samples and is not stale.
  bool Usable(const ClassState& state, int bucket, int protocol) const;
  // Both estimates of `bucket` are usable, or the class is averaged and its two estimates, of a
  // sample or more each, differ by kDecisiveRatio or more (Decisive).
  bool Ready(const ClassState& state, int bucket) const;
  bool Decisive(const ClassState& state, int bucket) const;
  // The other way's estimate of `bucket`, of a sample or more, costs kFarDearer times the used
  // way's; both fresh.
  bool FarDearer(const ClassState& state, int bucket, int other) const;
  // `seconds` beats `than` by more than the hysteresis.
  bool ClearlyFaster(double seconds, double than) const;
  // Whether a bucket of ready estimates between T's bucket and `to` (exclusive of T's, inclusive of
  // `to`) says the other way than a move there would: moving up across a bucket where Pin is
  // faster by more than `margin` (relative), or down across one where Get is.
  bool Contradicted(const ClassState& state, int to, bool up, double margin) const;
  // Whether this decision explores the other protocol than `chosen` (counts the decisions).
  // `batch`: a batch class's decision (tries an unknown way at once).
  bool ExploreLocked(ClassState& state, uint64_t size, PeerProtocol chosen, bool batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where lines fitted to each protocol's estimates (every size class with min_samples) cross:
  // the largest power of two at which Get is no slower; nullopt when either has fewer than two
  // classes or they do not cross.
  std::optional<uint64_t> FittedCrossover(const ClassState& state) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After an observation in `bucket`: moves the threshold when the estimates next to it, or the
  // ready estimates of `bucket` farther away, contradict it by more than the hysteresis.
  void AdaptLocked(ClassState& state, int bucket) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the threshold `up` (or down) to `step`, one bucket from T, or further in that direction
  // to FittedCrossover; `why` says what moved it.
  void MoveToward(ClassState& state, uint64_t step, bool up, std::string why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the threshold (a flip if it changed) and why.
  static void MoveTo(ClassState& state, uint64_t threshold, std::string reason);
  static PeerExplanation ExplainClass(const ClassState& state, int concurrency_class);
  uint64_t Clamp(uint64_t threshold) const;

  const ThresholdPolicyOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, PeerState> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_THRESHOLD_POLICY_H_
