// FakeRequestHandler: the layer above the transport, faked for transport tests. Echoes Calls
// ("echo:" + request; "sleep:MS" sleeps first), answers AllowRead from a switch (optionally after
// a delay), and records connects and disconnects.
#ifndef RPLASMA_TESTS_UNIT_TRANSPORT_TCP_FAKE_REQUEST_HANDLER_H_
#define RPLASMA_TESTS_UNIT_TRANSPORT_TCP_FAKE_REQUEST_HANDLER_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include "manager/transport/transport.h"
#include "protocol/base/mutex_lock.h"

namespace rplasma::transport::testing {

class FakeRequestHandler : public RequestHandler {
 public:
  void OnConnect(uint64_t conn_id, const std::string& peer_address) override {
    MutexLock lock(&mu_);
    connects_[conn_id]++;
  }
  transport::CallReply HandleCall(uint64_t conn_id, absl::string_view request) override {
    calls_.fetch_add(1);
    if (request.substr(0, 6) == "sleep:") {
      absl::SleepFor(absl::Milliseconds(std::stoi(std::string(request.substr(6)))));
      return "slept";
    }
    if (request == "big-reply") return std::string(kMaxCallBytes + 1, 'x');
    return "echo:" + std::string(request);
  }
  bool AllowRead(uint64_t conn_id, const RemoteRegion& region) override {
    allow_read_calls_.fetch_add(1);
    if (delayed_reads_left_.fetch_sub(1) > 0) absl::SleepFor(absl::Milliseconds(read_delay_ms_.load()));
    return allow_reads_.load();
  }
  void OnDisconnect(uint64_t conn_id) override {
    MutexLock lock(&mu_);
    disconnects_[conn_id]++;
  }

  void set_allow_reads(bool allow) { allow_reads_.store(allow); }
  // The next `reads` Read requests are held for `delay` before they are answered.
  void DelayNextReads(int reads, absl::Duration delay) {
    read_delay_ms_.store(absl::ToInt64Milliseconds(delay));
    delayed_reads_left_.store(reads);
  }
  int calls() const { return calls_.load(); }
  int allow_read_calls() const { return allow_read_calls_.load(); }
  size_t connect_count() const {
    MutexLock lock(&mu_);
    return connects_.size();
  }
  size_t disconnect_count() const {
    MutexLock lock(&mu_);
    return disconnects_.size();
  }
  // True if every connected id disconnected exactly once and nothing else disconnected.
  bool DisconnectsMatchConnects() const {
    MutexLock lock(&mu_);
    if (connects_.size() != disconnects_.size()) return false;
    for (const auto& [id, n] : connects_) {
      auto it = disconnects_.find(id);
      if (n != 1 || it == disconnects_.end() || it->second != 1) return false;
    }
    return true;
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, int> connects_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, int> disconnects_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> calls_{0};
  std::atomic<int> allow_read_calls_{0};
  std::atomic<bool> allow_reads_{true};
  std::atomic<int> delayed_reads_left_{0};
  std::atomic<int64_t> read_delay_ms_{0};
};

}  // namespace rplasma::transport::testing

#endif  // RPLASMA_TESTS_UNIT_TRANSPORT_TCP_FAKE_REQUEST_HANDLER_H_
