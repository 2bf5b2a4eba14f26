#include "manager/transport/verbs/async_event_monitor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <vector>

#include "protocol/base/logging.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

absl::StatusOr<std::unique_ptr<AsyncEventMonitor>> AsyncEventMonitor::Create(std::shared_ptr<DeviceSet> devices) {
  for (const auto& dev : devices->devices()) {
    int fd = dev->context->async_fd;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return ErrnoError("fcntl", "async event fd", errno);
  }
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return ErrnoError("eventfd", "async event monitor", errno);
  std::unique_ptr<AsyncEventMonitor> m(new AsyncEventMonitor(std::move(devices), std::move(wake)));
  m->thread_ = std::thread([p = m.get()] { p->Run(); });
  return m;
}

AsyncEventMonitor::~AsyncEventMonitor() {
  uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof(one)) < 0) LOG(WARNING) << "async event monitor: wake failed";
  if (thread_.joinable()) thread_.join();
}

void AsyncEventMonitor::Run() {
  const auto& devs = devices_->devices();
  std::vector<pollfd> fds;
  for (const auto& dev : devs) fds.push_back({dev->context->async_fd, POLLIN, 0});
  fds.push_back({wake_fd_.get(), POLLIN, 0});
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      LOG(ERROR) << "async event monitor: poll failed";
      return;
    }
    if (fds.back().revents != 0) return;
    for (size_t i = 0; i < devs.size(); ++i) {
      if (fds[i].revents == 0) continue;
      ibv_async_event ev;
      while (ibv_get_async_event(devs[i]->context, &ev) == 0) {
        bool bad = ev.event_type != IBV_EVENT_PORT_ACTIVE && ev.event_type != IBV_EVENT_LID_CHANGE &&
                   ev.event_type != IBV_EVENT_GID_CHANGE && ev.event_type != IBV_EVENT_COMM_EST &&
                   ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED;
        if (ev.event_type == IBV_EVENT_COMM_EST) {
          // first packet on a QP still in RTR: routine with rdma_cm
        } else if (bad) {
          LOG(WARNING) << "verbs device " << devs[i]->name << ": async event " << ibv_event_type_str(ev.event_type);
        } else {
          LOG(INFO) << "verbs device " << devs[i]->name << ": async event " << ibv_event_type_str(ev.event_type);
        }
        ibv_ack_async_event(&ev);
      }
    }
  }
}

}  // namespace rplasma::transport::verbs
