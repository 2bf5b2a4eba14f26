// PeerConnector: hands the fetch engine an authenticated channel to another node's manager.
// Production: ChannelCache (channel_cache.h: directory node record -> transport Connect, cached
// per address, auto-threshold calibration on first connect). Unit tests: a fake over in-process
// channels. Thread-safety: implementations are thread-safe.
#ifndef RPLASMA_MANAGER_FETCH_PEER_CONNECTOR_H_
#define RPLASMA_MANAGER_FETCH_PEER_CONNECTOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "manager/transport/transport.h"

namespace rplasma::fetch {

class PeerConnector {
 public:
  virtual ~PeerConnector() = default;
  // A channel to the manager of `node_id` (reused across calls while healthy). kObjectNotFound when
  // the node has no usable directory record (missing, expired, garbage): that source is skipped and
  // the fetch keeps waiting for another; kUnavailable/kPermissionDenied when the connect fails.
  virtual absl::StatusOr<std::shared_ptr<transport::Channel>> ChannelTo(const std::string& node_id,
                                                                        absl::Time deadline) = 0;
  // Drops the cached channel to `node_id` after a transport error, so the next use reconnects.
  virtual void Forget(const std::string& node_id) = 0;
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_PEER_CONNECTOR_H_
