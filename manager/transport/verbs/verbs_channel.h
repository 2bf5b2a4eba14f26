// VerbsChannel: the Channel a client gets from VerbsTransport::Connect — one peer, one endpoint at
// a time. When the endpoint fails (QP error, peer disconnect), the next Call/Read builds a new one
// (fresh ticket, fresh QP) and stats.reconnects counts it; the failed one is drained and destroyed
// when its last in-flight operation lets go of it.
//
// Thread-safe: Calls and Reads run concurrently on the current endpoint; reconnects are serialized.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_CHANNEL_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_CHANNEL_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "manager/transport/transport.h"
#include "manager/transport/verbs/endpoint.h"

namespace rplasma::transport::verbs {

class VerbsChannel : public Channel {
 public:
  // Builds a new endpoint to the same peer (authenticates again); bounded by the deadline.
  using Connector = std::function<absl::StatusOr<std::shared_ptr<Endpoint>>(absl::Time deadline)>;

  VerbsChannel(std::string peer_address, Connector connector, std::shared_ptr<Endpoint> endpoint,
               std::shared_ptr<VerbsCounters> counters)
      : peer_address_(std::move(peer_address)),
        connector_(std::move(connector)),
        counters_(std::move(counters)),
        endpoint_(std::move(endpoint)) {}
  ~VerbsChannel() override { Close(); }

  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) override;
  absl::Status Read(const RemoteRegion& region, uint8_t* dst, absl::Time deadline) override;
  bool healthy() const override;
  const std::string& peer_address() const override { return peer_address_; }

  // Closes the endpoint; later operations fail with kUnavailable. Idempotent.
  void Close();

 private:
  absl::StatusOr<std::shared_ptr<Endpoint>> Acquire(absl::Time deadline);

  const std::string peer_address_;
  const Connector connector_;
  const std::shared_ptr<VerbsCounters> counters_;
  absl::Mutex connect_mu_;  // serializes rebuilds; taken before mu_
  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<Endpoint> endpoint_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_CHANNEL_H_
