#include "manager/transport/tcp/tcp_receive_buffer.h"

#include <algorithm>
#include <cstring>

#include "manager/transport/tcp/tcp_socket.h"
#include "protocol/base/status.h"

namespace rplasma::transport::tcp {

TcpReceiveBuffer::TcpReceiveBuffer(size_t capacity)
    : capacity_(std::max<size_t>(capacity, 1)), data_(new uint8_t[capacity_]) {}

size_t TcpReceiveBuffer::TakeBuffered(uint8_t* dst, size_t size) {
  const size_t take = std::min(size, end_ - begin_);
  if (take > 0) std::memcpy(dst, data_.get() + begin_, take);
  begin_ += take;
  if (begin_ == end_) begin_ = end_ = 0;  // empty: the next recv() may use the whole buffer
  return take;
}

absl::Status TcpReceiveBuffer::ReadExact(int fd, void* dst, size_t size, absl::Time deadline,
                                         absl::Duration max_stall) {
  uint8_t* out = static_cast<uint8_t*>(dst);
  size_t took = TakeBuffered(out, size);
  out += took;
  size -= took;
  while (size > 0) {
    // Here the buffer is empty (TakeBuffered drained it or size would be 0).
    if (size >= capacity_) return RecvAll(fd, out, size, deadline, max_stall);  // bulk: no copy
    absl::StatusOr<size_t> got = RecvSome(fd, data_.get(), capacity_, deadline, max_stall);
    if (!got.ok()) return got.status();
    end_ = *got;
    took = TakeBuffered(out, size);
    out += took;
    size -= took;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> TcpReceiveBuffer::ReadSome(int fd, void* dst, size_t size, absl::Time deadline) {
  uint8_t* out = static_cast<uint8_t*>(dst);
  if (end_ > begin_) return TakeBuffered(out, size);
  if (size >= capacity_) return RecvSome(fd, out, size, deadline);  // bulk: no copy
  absl::StatusOr<size_t> got = RecvSome(fd, data_.get(), capacity_, deadline);
  if (!got.ok()) return got.status();
  end_ = *got;
  return TakeBuffered(out, size);
}

}  // namespace rplasma::transport::tcp
