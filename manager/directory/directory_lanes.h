// DirectoryLanes: several directories (each its own Redis connection) behind one Directory, so
// that concurrent reads do not queue behind each other on one connection.
//
// A fetch of many ids looks them up in chunks from several threads at once (FetchEngine's
// pipeline). On one connection each chunk's pipeline waits until the previous chunk's replies are
// read and parsed; on its own lane it is written at once, and Redis answers the chunks back to
// back. Lookup and GetNode go to a free lane (waiting for one when all are busy). Everything that
// writes (the node's record, its objects) goes to lane 0, so one lane holds this node's
// registration and the order of its writes.
//
// Thread-safety: thread-safe; a lane serves one call at a time.
#ifndef RPLASMA_MANAGER_DIRECTORY_DIRECTORY_LANES_H_
#define RPLASMA_MANAGER_DIRECTORY_DIRECTORY_LANES_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "manager/directory/directory.h"

namespace rplasma {

class DirectoryLanes : public Directory {
 public:
  // REQUIRES: !lanes.empty(), none null.
  explicit DirectoryLanes(std::vector<std::unique_ptr<Directory>> lanes);

  absl::Status RegisterNode(const NodeRecord& node) override { return lanes_[0]->RegisterNode(node); }
  absl::Status Heartbeat() override { return lanes_[0]->Heartbeat(); }
  absl::Status UnregisterNode() override { return lanes_[0]->UnregisterNode(); }
  absl::Status PublishObject(const ObjectID& id, const ObjectLocation& location) override {
    return lanes_[0]->PublishObject(id, location);
  }
  absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) override {
    return lanes_[0]->PublishObjects(objects);
  }
  absl::Status RemoveObject(const ObjectID& id) override { return lanes_[0]->RemoveObject(id); }
  absl::Status RemoveObjects(absl::Span<const ObjectID> ids) override { return lanes_[0]->RemoveObjects(ids); }
  absl::StatusOr<std::vector<ObjectID>> ListOwnObjects() override { return lanes_[0]->ListOwnObjects(); }

  // On a free lane.
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> Lookup(absl::Span<const ObjectID> ids) override;
  absl::StatusOr<NodeRecord> GetNode(const std::string& node_id) override;

  size_t lanes() const { return lanes_.size(); }

  // Each lane no call holds now answers one GetNode of `node_id`: a lane whose Redis connection
  // broke (a failed call closes it; the next call reconnects) connects again now, not at the
  // next lookup, which may be long away when fetches go by cache, hint or guess. Lanes in use are
  // left to their callers. For when Redis came back (the manager's reconnect callback). False if
  // an idle lane's call failed (Redis still down, or the lane still in its reconnect backoff):
  // call again later.
  bool ReconnectIdle(const std::string& node_id);

 private:
  // A lane no other call uses until Release(lane).
  size_t Acquire();
  void Release(size_t lane);

  const std::vector<std::unique_ptr<Directory>> lanes_;
  absl::Mutex mu_;
  absl::CondVar freed_;
  std::vector<size_t> free_ ABSL_GUARDED_BY(mu_);  // lanes no call holds; the last freed is taken first
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_DIRECTORY_LANES_H_
