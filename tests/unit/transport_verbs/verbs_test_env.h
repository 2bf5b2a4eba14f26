// Helpers for tests that need a real verbs device (label rdma-guest): where to listen, and a
// RequestHandler that echoes, can be stalled, and counts connects/disconnects.
#ifndef RPLASMA_TESTS_UNIT_TRANSPORT_VERBS_VERBS_TEST_ENV_H_
#define RPLASMA_TESTS_UNIT_TRANSPORT_VERBS_VERBS_TEST_ENV_H_

#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/synchronization/mutex.h"

#include "manager/transport/transport.h"
#include "manager/transport/verbs/verbs_transport.h"
#include "protocol/base/mutex_lock.h"
#include "tests/support/skip.h"

namespace rplasma::transport::testing {

// The IP of the RDMA netdev ($RPLASMA_VERBS_TEST_IP, else $RDMA_VM_IP set by tests/rdma-vm), or
// "" with `why` filled when the test must skip.
inline std::string VerbsTestIp(std::string* why) {
  if (!IsVerbsDeviceAvailable()) {
    *why = "no RDMA device here (run through tests/rdma-vm: ctest -L rdma)";
    return "";
  }
  for (const char* var : {"RPLASMA_VERBS_TEST_IP", "RDMA_VM_IP"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return v;
  }
  *why = "RDMA device present but no address: set RPLASMA_VERBS_TEST_IP to an IP of its netdev";
  return "";
}

#define RPLASMA_REQUIRE_VERBS_IP(ip_var)                       \
  std::string ip_var;                                          \
  {                                                            \
    std::string why;                                           \
    ip_var = ::rplasma::transport::testing::VerbsTestIp(&why); \
    if (ip_var.empty()) RPLASMA_SKIP_TEST("rdma-device", why); \
  }

// Echo handler: replies "re:" + request. While stalled, HandleCall blocks until Resume().
class EchoHandler : public RequestHandler {
 public:
  void OnConnect(uint64_t conn_id, const std::string& peer) override { connects.fetch_add(1); }
  transport::CallReply HandleCall(uint64_t conn_id, absl::string_view request) override {
    calls.fetch_add(1);
    MutexLock lock(&mu_);
    while (stalled_) lock.Wait(&cv_);
    return "re:" + std::string(request);
  }
  bool AllowRead(uint64_t, const RemoteRegion&) override { return false; }
  void OnDisconnect(uint64_t conn_id) override { disconnects.fetch_add(1); }

  void Stall() {
    MutexLock lock(&mu_);
    stalled_ = true;
  }
  void Resume() {
    MutexLock lock(&mu_);
    stalled_ = false;
    cv_.SignalAll();
  }

  std::atomic<int> connects{0}, disconnects{0}, calls{0};

 private:
  absl::Mutex mu_;
  absl::CondVar cv_;
  bool stalled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rplasma::transport::testing

#endif  // RPLASMA_TESTS_UNIT_TRANSPORT_VERBS_VERBS_TEST_ENV_H_
