#include "manager/directory/directory_lanes.h"

#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma {

DirectoryLanes::DirectoryLanes(std::vector<std::unique_ptr<Directory>> lanes) : lanes_(std::move(lanes)) {
  MutexLock lock(&mu_);
  // Lane 0 last, so that it is taken first: a lone caller keeps to the connection that is warm.
  for (size_t lane = lanes_.size(); lane > 0; --lane) free_.push_back(lane - 1);
}

size_t DirectoryLanes::Acquire() {
  MutexLock lock(&mu_);
  while (free_.empty()) lock.Wait(&freed_);
  const size_t lane = free_.back();
  free_.pop_back();
  return lane;
}

void DirectoryLanes::Release(size_t lane) {
  MutexLock lock(&mu_);
  free_.push_back(lane);
  freed_.Signal();
}

absl::StatusOr<std::vector<std::vector<ObjectLocation>>> DirectoryLanes::Lookup(absl::Span<const ObjectID> ids) {
  const size_t lane = Acquire();
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> found = lanes_[lane]->Lookup(ids);
  Release(lane);
  return found;
}

absl::StatusOr<NodeRecord> DirectoryLanes::GetNode(const std::string& node_id) {
  const size_t lane = Acquire();
  absl::StatusOr<NodeRecord> node = lanes_[lane]->GetNode(node_id);
  Release(lane);
  return node;
}

bool DirectoryLanes::ReconnectIdle(const std::string& node_id) {
  std::vector<size_t> idle;
  {
    MutexLock lock(&mu_);
    idle.swap(free_);
  }
  bool answered = true;
  for (size_t lane : idle) {
    const absl::StatusOr<NodeRecord> node = lanes_[lane]->GetNode(node_id);
    // NotFound (no such record, e.g. this node's not registered yet) still needed a connection.
    answered = answered && (node.ok() || ErrorCodeOf(node.status()) == ErrorCode::kObjectNotFound);
  }
  MutexLock lock(&mu_);
  // Back in the order they were taken out (lane 0 still taken first), before any lane freed since.
  free_.insert(free_.begin(), idle.begin(), idle.end());
  if (!idle.empty()) freed_.SignalAll();
  return answered;
}

}  // namespace rplasma
