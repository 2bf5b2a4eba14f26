// DeviceSet: the RDMA devices one transport uses, each with its protection domain and (once
// RegisterArena ran) its registration of the arena.
//
// rdma_get_devices() returns the ibv_contexts librdmacm itself uses, so a cm_id's `verbs` pointer
// is one of ours and QPs/MRs built on our PD work with it. With `device_name` set only that device
// is used (connections resolved to another are refused).
//
// The arena is registered once per device with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ
// (never remote write or atomics). RegionFor's rkey is the primary device's (the named one, else
// the first): with several devices, serve peers through the primary one.
//
// Thread-safety: RegisterArena must complete before any endpoint exists (the transport enforces
// it); after that everything is read-only. Shared (std::shared_ptr) by the transport and every
// endpoint, so PDs outlive the QPs and MRs built on them.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_DEVICE_SET_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_DEVICE_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "manager/transport/verbs/verbs_raii.h"

namespace rplasma::transport::verbs {

struct DeviceContext {
  ibv_context* context = nullptr;  // owned by the DeviceSet's device list
  std::string name;
  ibv_device_attr attr{};
  uint64_t max_msg_sz = 0;  // port 1
  PdPtr pd;
  MrPtr arena_mr;  // null until RegisterArena
};

class DeviceSet {
 public:
  // kUnavailable if there is no (matching) device.
  static absl::StatusOr<std::shared_ptr<DeviceSet>> Create(const std::string& device_name);
  ~DeviceSet();
  DeviceSet(const DeviceSet&) = delete;
  DeviceSet& operator=(const DeviceSet&) = delete;

  absl::Status RegisterArena(uint8_t* base, uint64_t size);
  // The context for a cm_id's device, or null if that device is not ours.
  DeviceContext* Find(ibv_context* context);
  DeviceContext& primary() { return *devices_.front(); }
  const DeviceContext& primary() const { return *devices_.front(); }
  uint8_t* arena_base() const { return arena_base_; }
  uint64_t arena_size() const { return arena_size_; }
  const std::vector<std::unique_ptr<DeviceContext>>& devices() const { return devices_; }

 private:
  DeviceSet() = default;
  DeviceListPtr list_;
  std::vector<std::unique_ptr<DeviceContext>> devices_;  // destroyed before list_
  uint8_t* arena_base_ = nullptr;
  uint64_t arena_size_ = 0;
};

// True iff ibv_get_device_list() reports at least one device (lets `--transport auto` fall back).
bool IsVerbsDeviceAvailableImpl();

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_DEVICE_SET_H_
