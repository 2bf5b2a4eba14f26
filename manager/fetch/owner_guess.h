// OwnerGuess: the node that probably holds objects this manager has never fetched, so that a fetch
// without a hint can go straight to it (a guessed hint) instead of asking the directory first.
//
// A consumer usually fetches what one producer made a moment ago: the node that held most of the
// ids of its last directory lookup holds the next ones too. The guess is only a hint: a guessed
// node that does not have an id costs that id one round trip before the directory is asked, never
// wrong bytes or a failed fetch. It is tried only while it pays:
//   * Learn(node): a lookup made without a guess found most of its ids on `node` (which proves it
//     alive). The candidate raises the confidence; another node lowers it, and takes the
//     candidate's place once it is down to 1 (a workload whose lookups name a new node each time
//     never gets to guess).
//   * Judge(node, tried, served): a guess was tried for `tried` ids and `node` served `served` of
//     them. Half or more raises the confidence; fewer lowers it by 2 (one miss after a long run
//     of hits keeps guessing, two stop it until lookups agree again).
//   * Guess(): the candidate while its confidence is at least kConfident and it proved alive
//     (a lookup listed it or it served a guess) within `node_ttl`; else "".
//   * Forget(node): the node could not be reached: no guess of it until lookups name it again.
//
// Thread-safety: thread-safe.
#ifndef RPLASMA_MANAGER_FETCH_OWNER_GUESS_H_
#define RPLASMA_MANAGER_FETCH_OWNER_GUESS_H_

#include <cstddef>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "protocol/base/clock.h"

namespace rplasma::fetch {

class OwnerGuess {
 public:
  static constexpr int kConfident = 2;
  static constexpr int kMaxConfidence = 4;

  // `clock` is borrowed and outlives this. `enabled` false: Guess always says "".
  OwnerGuess(bool enabled, absl::Duration node_ttl, Clock* clock)
      : enabled_(enabled), node_ttl_(node_ttl), clock_(clock) {}

  std::string Guess() const;
  void Learn(const std::string& node);
  void Judge(const std::string& node, size_t tried, size_t served);
  void Forget(const std::string& node);

 private:
  const bool enabled_;
  const absl::Duration node_ttl_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::string candidate_ ABSL_GUARDED_BY(mu_);
  int confidence_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time alive_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_OWNER_GUESS_H_
