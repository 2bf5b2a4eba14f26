// ChannelCache: the production PeerConnector. Node id -> the node's record in the directory ->
// its address for our transport (tcp_address or verbs_address) -> one authenticated Channel,
// reused until it turns unhealthy or Forget() drops it; every new connection also drops the
// channels that turned unhealthy (dead or restarted peers), so they never pile up. With
// `--pin-threshold auto`, a peer is calibrated (threshold_prober.h) before its first channel's
// first use, over a connection of the probe's own (Transport::ConnectPrivate), closed after it: the
// probe's 4 MiB replies must not shape the channel that later carries the transfers it predicts.
//
// Thread-safety: thread-safe. Connects and probes run outside the lock; when two threads connect
// to one peer at once, the first channel stored wins and the other is dropped.
#ifndef RPLASMA_MANAGER_FETCH_CHANNEL_CACHE_H_
#define RPLASMA_MANAGER_FETCH_CHANNEL_CACHE_H_

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"

#include "manager/directory/directory.h"
#include "manager/fetch/peer_connector.h"
#include "manager/fetch/threshold_policy.h"
#include "manager/peer/local_store.h"
#include "manager/stats/manager_stats.h"
#include "manager/transport/transport.h"
#include "protocol/base/clock.h"

namespace rplasma::fetch {

class ChannelCache : public PeerConnector {
 public:
  // Borrowed pointers; they outlive the cache. `verbs` picks NodeRecord::verbs_address.
  ChannelCache(transport::Transport* transport, bool verbs, Directory* directory, ThresholdPolicy* policy,
               peer::LocalStore* store, manager::ManagerStats* stats, Clock* clock)
      : transport_(transport),
        verbs_(verbs),
        directory_(directory),
        policy_(policy),
        store_(store),
        stats_(stats),
        clock_(clock) {}

  absl::StatusOr<std::shared_ptr<transport::Channel>> ChannelTo(const std::string& node_id,
                                                                absl::Time deadline) override;
  void Forget(const std::string& node_id) override;
  // Drops every channel (shutdown).
  void Clear();
  size_t size() const;

 private:
  // Probes `node_id` at `address` once (adaptive mode), over a private channel.
  void MaybeCalibrate(const std::string& node_id, const std::string& address, absl::Time deadline);

  transport::Transport* const transport_;
  const bool verbs_;
  Directory* const directory_;
  ThresholdPolicy* const policy_;
  peer::LocalStore* const store_;
  manager::ManagerStats* const stats_;
  Clock* const clock_;

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<transport::Channel>> channels_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> calibrating_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_CHANNEL_CACHE_H_
