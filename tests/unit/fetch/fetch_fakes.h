// In-process fakes of the layers below the fetch engine, for unit tests only: those of the peer
// side (FakeLocalStore, FakeChannel: tests/unit/peer/peer_fakes.h), and
//   FakeDirectory  — a map of id -> locations
//   FakeConnector  — node id -> FakeChannel
#ifndef RPLASMA_TESTS_UNIT_FETCH_FETCH_FAKES_H_
#define RPLASMA_TESTS_UNIT_FETCH_FETCH_FAKES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

#include "manager/directory/directory.h"
#include "manager/fetch/peer_connector.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"
#include "tests/unit/peer/peer_fakes.h"

namespace rplasma::testing {

class FakeDirectory : public Directory {
 public:
  absl::Status RegisterNode(const NodeRecord& node) override { return absl::OkStatus(); }
  absl::Status Heartbeat() override { return absl::OkStatus(); }
  absl::Status UnregisterNode() override { return absl::OkStatus(); }
  absl::Status PublishObject(const ObjectID& id, const ObjectLocation& location) override {
    MutexLock lock(&mu_);
    auto& v = locations_[id];
    for (auto& l : v) {
      if (l.node_id == location.node_id) {
        l = location;
        return absl::OkStatus();
      }
    }
    v.push_back(location);
    return absl::OkStatus();
  }
  absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) override {
    for (const auto& [id, loc] : objects) RETURN_IF_ERROR(PublishObject(id, loc));
    return absl::OkStatus();
  }
  absl::Status RemoveObject(const ObjectID& id) override { return absl::OkStatus(); }
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> Lookup(absl::Span<const ObjectID> ids) override {
    MutexLock lock(&mu_);
    if (down_) return MakeError(ErrorCode::kUnavailable, "fake directory down");
    ++lookups_;
    std::vector<std::vector<ObjectLocation>> out;
    for (const ObjectID& id : ids)
      out.push_back(locations_.contains(id) ? locations_[id] : std::vector<ObjectLocation>{});
    return out;
  }
  absl::StatusOr<NodeRecord> GetNode(const std::string& node_id) override { return NodeRecord{node_id, "", "", 0}; }

  void SetDown(bool down) {
    MutexLock lock(&mu_);
    down_ = down;
  }
  // Every location of `id` gone (its owners deleted it).
  void Unpublish(const ObjectID& id) {
    MutexLock lock(&mu_);
    locations_.erase(id);
  }
  int lookups() {
    MutexLock lock(&mu_);
    return lookups_;
  }

 private:
  absl::Mutex mu_;
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  int lookups_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<ObjectID, std::vector<ObjectLocation>> locations_ ABSL_GUARDED_BY(mu_);
};

class FakeConnector : public fetch::PeerConnector {
 public:
  void Add(const std::string& node_id, std::shared_ptr<transport::Channel> channel) {
    MutexLock lock(&mu_);
    channels_[node_id] = std::move(channel);
  }
  absl::StatusOr<std::shared_ptr<transport::Channel>> ChannelTo(const std::string& node_id,
                                                                absl::Time deadline) override {
    MutexLock lock(&mu_);
    auto it = channels_.find(node_id);
    if (it == channels_.end() || it->second == nullptr) {
      return MakeError(ErrorCode::kUnavailable, "fake connector: unknown or unreachable node " + node_id);
    }
    return it->second;
  }
  void Forget(const std::string& node_id) override {}

 private:
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<transport::Channel>> channels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_UNIT_FETCH_FETCH_FAKES_H_
