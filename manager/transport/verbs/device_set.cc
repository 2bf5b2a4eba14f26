#include "manager/transport/verbs/device_set.h"

#include <cerrno>

#include "absl/strings/str_format.h"

#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

bool IsVerbsDeviceAvailableImpl() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return false;
  ibv_free_device_list(list);
  return n > 0;
}

absl::StatusOr<std::shared_ptr<DeviceSet>> DeviceSet::Create(const std::string& device_name) {
  std::shared_ptr<DeviceSet> set(new DeviceSet());
  int n = 0;
  set->list_.reset(rdma_get_devices(&n));
  if (!set->list_ || n == 0) return MakeError(ErrorCode::kUnavailable, "rdma_get_devices: no RDMA device");
  for (int i = 0; i < n; ++i) {
    ibv_context* ctx = set->list_.get()[i];
    std::string name = ibv_get_device_name(ctx->device);
    if (!device_name.empty() && name != device_name) continue;
    auto dev = std::make_unique<DeviceContext>();
    dev->context = ctx;
    dev->name = name;
    if (int rc = ibv_query_device(ctx, &dev->attr); rc != 0) return ErrnoError("ibv_query_device", name, rc);
    ibv_port_attr port{};
    if (int rc = ibv_query_port(ctx, 1, &port); rc != 0) return ErrnoError("ibv_query_port", name, rc);
    dev->max_msg_sz = port.max_msg_sz;
    dev->pd.reset(ibv_alloc_pd(ctx));
    if (!dev->pd) return ErrnoError("ibv_alloc_pd", name, errno);
    set->devices_.push_back(std::move(dev));
  }
  if (set->devices_.empty()) {
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("RDMA device %s not found", device_name));
  }
  return set;
}

DeviceSet::~DeviceSet() { devices_.clear(); }

absl::Status DeviceSet::RegisterArena(uint8_t* base, uint64_t size) {
  if (arena_base_ != nullptr) return MakeError(ErrorCode::kInvalidArgument, "verbs arena already registered");
  if (base == nullptr || size == 0) return MakeError(ErrorCode::kInvalidArgument, "verbs arena is empty");
  for (auto& dev : devices_) {
    if (size > dev->attr.max_mr_size) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("arena of %u bytes exceeds %s max_mr_size %u", size,
                                                                    dev->name, dev->attr.max_mr_size));
    }
    // Remote peers may only read: no REMOTE_WRITE, no REMOTE_ATOMIC.
    dev->arena_mr.reset(ibv_reg_mr(dev->pd.get(), base, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
    if (!dev->arena_mr) {
      int err = errno;
      for (auto& d : devices_) d->arena_mr.reset();
      return ErrnoError("ibv_reg_mr", absl::StrFormat("arena on %s (%u bytes)", dev->name, size), err);
    }
  }
  arena_base_ = base;
  arena_size_ = size;
  return absl::OkStatus();
}

DeviceContext* DeviceSet::Find(ibv_context* context) {
  for (auto& dev : devices_) {
    if (dev->context == context) return dev.get();
  }
  return nullptr;
}

}  // namespace rplasma::transport::verbs
