// ReadPlan: how one Read is cut into RDMA READ work requests, and how many may be outstanding.
//
//   chunk  = min(read_chunk_bytes, port max_msg_sz)             bytes per READ work request
//   window = min(max_reads_in_flight, device max_qp_init_rd_atom, peer's responder resources)
//            (at least 1)                                      READs outstanding per QP
//
// The window is per endpoint (shared by concurrent Reads on it): the responder drops READs beyond
// its advertised resources, which would surface as retry-exceeded errors, never as success.
// Pure functions: unit-tested without a device.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_READ_PLAN_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_READ_PLAN_H_

#include <algorithm>
#include <cstdint>

namespace rplasma::transport::verbs {

inline uint64_t ReadChunkBytes(uint64_t read_chunk_bytes, uint64_t port_max_msg_sz) {
  uint64_t chunk = port_max_msg_sz == 0 ? read_chunk_bytes : std::min(read_chunk_bytes, port_max_msg_sz);
  return std::max<uint64_t>(chunk, 1);
}

inline uint32_t ReadWindow(uint32_t max_reads_in_flight, uint32_t device_init_rd_atom, uint32_t peer_responder) {
  uint32_t w = std::min({max_reads_in_flight, device_init_rd_atom, peer_responder});
  return std::max<uint32_t>(w, 1);
}

// Number of READ work requests for `length` bytes.
inline uint64_t ReadChunkCount(uint64_t length, uint64_t chunk) { return length == 0 ? 0 : (length + chunk - 1) / chunk; }

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_READ_PLAN_H_
