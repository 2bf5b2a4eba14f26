// AsyncEventMonitor: reads and logs the asynchronous events of every device in a DeviceSet
// (port up/down, QP fatal, CQ errors, device fatal). Endpoints learn about failures from their
// work completions and cm events; this makes the device's own view visible in the log.
// One thread; destruction stops it.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_ASYNC_EVENT_MONITOR_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_ASYNC_EVENT_MONITOR_H_

#include <memory>
#include <thread>

#include "absl/status/statusor.h"

#include "manager/transport/verbs/device_set.h"
#include "protocol/base/unique_fd.h"

namespace rplasma::transport::verbs {

class AsyncEventMonitor {
 public:
  static absl::StatusOr<std::unique_ptr<AsyncEventMonitor>> Create(std::shared_ptr<DeviceSet> devices);
  ~AsyncEventMonitor();
  AsyncEventMonitor(const AsyncEventMonitor&) = delete;
  AsyncEventMonitor& operator=(const AsyncEventMonitor&) = delete;

 private:
  AsyncEventMonitor(std::shared_ptr<DeviceSet> devices, UniqueFd wake)
      : devices_(std::move(devices)), wake_fd_(std::move(wake)) {}
  void Run();

  std::shared_ptr<DeviceSet> devices_;
  UniqueFd wake_fd_;
  std::thread thread_;
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_ASYNC_EVENT_MONITOR_H_
