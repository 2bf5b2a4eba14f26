#include "manager/transport/verbs/message_ring.h"

#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_format.h"

#include "protocol/base/status.h"

namespace rplasma::transport::verbs {

absl::StatusOr<std::unique_ptr<MessageRing>> MessageRing::Create(ibv_pd* pd, uint32_t data_credits,
                                                                 uint32_t message_bytes) {
  std::unique_ptr<MessageRing> ring(new MessageRing(data_credits, message_bytes));
  uint64_t bytes = 2ull * ring->slots() * message_bytes;
  void* mem = nullptr;
  if (int rc = posix_memalign(&mem, 4096, bytes); rc != 0) {
    return MakeError(ErrorCode::kOutOfMemory, absl::StrFormat("message buffers (%u bytes)", bytes));
  }
  ring->base_ = static_cast<uint8_t*>(mem);
  // An int, not the enum: rdma-core's ibv_reg_mr macro ANDs it with another enum type, which
  // clang rejects as a deprecated enum-enum operation.
  const int access = IBV_ACCESS_LOCAL_WRITE;
  ring->mr_.reset(ibv_reg_mr(pd, mem, bytes, access));
  if (!ring->mr_) return ErrnoError("ibv_reg_mr", absl::StrFormat("message buffers (%u bytes)", bytes), errno);
  return ring;
}

MessageRing::~MessageRing() {
  mr_.reset();  // deregister before the memory goes
  std::free(base_);
}

absl::Status MessageRing::PostRecv(ibv_qp* qp, uint32_t slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(recv_buffer(slot));
  sge.length = message_bytes_;
  sge.lkey = mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kRecv, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp, &wr, &bad); rc != 0) return ErrnoError("ibv_post_recv", "message buffer", rc);
  return absl::OkStatus();
}

absl::Status MessageRing::PostSend(ibv_qp* qp, uint32_t slot, uint32_t length) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(send_buffer(slot));
  sge.length = length;
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kSend, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp, &wr, &bad); rc != 0) return ErrnoError("ibv_post_send", "SEND", rc);
  return absl::OkStatus();
}

}  // namespace rplasma::transport::verbs
