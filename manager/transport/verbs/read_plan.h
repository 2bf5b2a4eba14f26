// ReadPlan: how one Read is cut into RDMA READ work requests, and how many may be outstanding.
//
//   chunk  = min(read_chunk_bytes, port max_msg_sz)             bytes per READ work request
//   window = min(max_reads_in_flight, device max_qp_init_rd_atom, peer's responder resources)
//            (at least 1)                                      READs outstanding per QP
//
// The window is per endpoint (shared by concurrent Reads on it): the responder drops READs beyond
// its advertised resources, which would surface as retry-exceeded errors, never as success.
// ReadProgress follows one Read as its chunks are posted and come back: a Read may return only when
// none of its READs can still write into the destination, and has succeeded only if every chunk was
// posted and came back without error.
// Device-free: unit-tested without a device. ReadProgress is not thread-safe (the endpoint's mutex).
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_READ_PLAN_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_READ_PLAN_H_

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"

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
inline uint64_t ReadChunkCount(uint64_t length, uint64_t chunk) {
  return length == 0 ? 0 : (length + chunk - 1) / chunk;
}

class ReadProgress {
 public:
  struct Chunk {
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  // `length` bytes in READs of at most `chunk` (>= 1) bytes.
  ReadProgress(uint64_t length, uint64_t chunk) : length_(length), chunk_(std::max<uint64_t>(chunk, 1)) {}

  // A chunk remains to be posted and nothing failed.
  bool more_to_post() const { return status_.ok() && next_ < length_; }
  // REQUIRES: more_to_post(). The next chunk to post.
  Chunk Next() const { return {next_, std::min(chunk_, length_ - next_)}; }
  // Next() was posted: it is outstanding until Completed.
  void Posted() {
    next_ += Next().length;
    ++outstanding_;
  }
  // One READ came back with `status` (its work completion's). The first failure is kept.
  void Completed(const absl::Status& status) {
    --outstanding_;
    Fail(status);
  }
  // Keeps the first failure; no chunk is posted after one.
  void Fail(const absl::Status& status) {
    if (status_.ok()) status_ = status;
  }

  bool all_back() const { return outstanding_ == 0; }
  uint32_t outstanding() const { return outstanding_; }
  bool succeeded() const { return status_.ok() && outstanding_ == 0 && next_ >= length_; }
  const absl::Status& status() const { return status_; }
  uint64_t length() const { return length_; }

 private:
  const uint64_t length_;
  const uint64_t chunk_;
  uint64_t next_ = 0;         // first byte not yet posted
  uint32_t outstanding_ = 0;  // READs posted, not come back
  absl::Status status_;       // first failure
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_READ_PLAN_H_
