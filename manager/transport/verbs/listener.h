// Listener: the passive side of the verbs transport — an rdma_cm listening cm_id, its TCP AuthPort
// on the same host:port number, and every accepted endpoint.
//
// Connection admission (in this order, nothing verbs-side is built before step 3):
//   1. the peer authenticates on the AuthPort (HMAC challenge-response) and gets a one-time ticket;
//   2. RDMA_CM_EVENT_CONNECT_REQUEST: the private data must carry an issued, unused, unexpired
//      ticket — else rdma_reject() with "RPVR" and auth_failures++ (no PD/CQ/QP touched);
//   3. only then Endpoint::Accept builds CQ + buffers + QP and rdma_accept()s.
// RequestHandler::OnConnect precedes the first HandleCall; OnDisconnect(conn_id) runs exactly once
// per accepted connection (DISCONNECTED / errors / shutdown).
//
// Threads: one event thread handles every cm event of the listening id and its children.
// Destruction stops it, closes every endpoint (OnDisconnect each) and unbinds.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_LISTENER_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_LISTENER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "manager/transport/transport.h"
#include "manager/transport/verbs/auth_port.h"
#include "manager/transport/verbs/endpoint.h"
#include "manager/transport/verbs/ticket_book.h"

namespace rplasma::transport::verbs {

class Listener {
 public:
  static absl::StatusOr<std::unique_ptr<Listener>> Create(const TransportOptions& options,
                                                          std::shared_ptr<DeviceSet> devices,
                                                          std::shared_ptr<VerbsCounters> counters,
                                                          AuthPortCounters* auth_counters, const std::string& address,
                                                          RequestHandler* handler);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  const std::string& bound_address() const { return bound_address_; }
  uint64_t connections() const;

 private:
  Listener(const TransportOptions& options, std::shared_ptr<DeviceSet> devices, std::shared_ptr<VerbsCounters> counters,
           RequestHandler* handler);
  absl::Status Bind(const TransportOptions& options, const std::string& address, AuthPortCounters* auth_counters);
  void Run();
  void OnConnectRequest(rdma_cm_id* id, const std::vector<uint8_t>& private_data, const rdma_conn_param& param);
  void Drop(rdma_cm_id* id);

  const TransportOptions options_;  // also each accepted endpoint's
  const std::shared_ptr<DeviceSet> devices_;
  const std::shared_ptr<VerbsCounters> counters_;
  RequestHandler* const handler_;
  std::unique_ptr<TicketBook> tickets_;

  EventChannelPtr events_;
  CmIdPtr listen_id_;
  std::unique_ptr<AuthPort> auth_;
  UniqueFd wake_fd_;
  std::string bound_address_;
  std::atomic<bool> stop_{false};
  AuthPortCounters* auth_counters_ = nullptr;
  uint64_t next_conn_id_ = 1;  // event thread only
  std::thread thread_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<rdma_cm_id*, std::shared_ptr<Endpoint>> endpoints_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_LISTENER_H_
