// Unique owners for every verbs / rdma_cm object the transport creates.
//
// Each alias is a std::unique_ptr whose deleter calls the matching destroy function and logs (never
// aborts on) a failure. Owners are declared in acquisition order in their holders, so members are
// destroyed in reverse: QP -> MR -> CQ -> completion channel -> PD -> cm_id -> event channel.
// A QP created with rdma_create_qp() belongs to its cm_id: QpOwner destroys it through
// rdma_destroy_qp(id) and must be destroyed before the cm_id.
//
// This header (with the other files of this directory) is the only place that includes verbs headers.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_RAII_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_RAII_H_

#include <memory>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "protocol/base/logging.h"

namespace rplasma::transport::verbs {

struct EventChannelDeleter {
  void operator()(rdma_event_channel* c) const { rdma_destroy_event_channel(c); }
};
struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const {
    if (rdma_destroy_id(id) != 0) LOG(WARNING) << "rdma_destroy_id failed: errno " << errno;
  }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const {
    if (int rc = ibv_dealloc_pd(pd); rc != 0) LOG(WARNING) << "ibv_dealloc_pd failed: " << rc;
  }
};
struct CompChannelDeleter {
  void operator()(ibv_comp_channel* c) const {
    if (int rc = ibv_destroy_comp_channel(c); rc != 0) LOG(WARNING) << "ibv_destroy_comp_channel failed: " << rc;
  }
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const {
    if (int rc = ibv_destroy_cq(cq); rc != 0) LOG(WARNING) << "ibv_destroy_cq failed: " << rc;
  }
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const {
    if (int rc = ibv_dereg_mr(mr); rc != 0) LOG(WARNING) << "ibv_dereg_mr failed: " << rc;
  }
};
// Owns the QP of a cm_id (rdma_create_qp); the pointer is the cm_id, not the QP.
struct CmQpDeleter {
  void operator()(rdma_cm_id* id) const { rdma_destroy_qp(id); }
};
struct DeviceListDeleter {
  void operator()(ibv_context** list) const { rdma_free_devices(list); }
};

using EventChannelPtr = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, CmIdDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using CompChannelPtr = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using QpOwner = std::unique_ptr<rdma_cm_id, CmQpDeleter>;
using DeviceListPtr = std::unique_ptr<ibv_context*, DeviceListDeleter>;

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_RAII_H_
