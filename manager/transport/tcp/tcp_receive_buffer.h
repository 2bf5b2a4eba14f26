// TcpReceiveBuffer: exact reads from one non-blocking socket through a small buffer, so that a
// small message — header and payload — usually costs a single recv() instead of one per part.
//
// ReadExact first hands out bytes already buffered; when more are needed it recv()s whatever has
// arrived, up to the buffer's capacity. A read of at least `capacity` bytes that the buffer cannot
// satisfy goes straight into the destination after the buffered bytes (no copy of bulk data
// beyond what one recv() over-read). Bytes buffered past a message belong to the next one.
//
// Invariant: begin_ <= end_ <= capacity_; [begin_, end_) are received bytes not yet handed out.
// Thread-safety: none; one reading thread owns a buffer (and must be the socket's only reader).
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TCP_RECEIVE_BUFFER_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TCP_RECEIVE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rplasma::transport::tcp {

class TcpReceiveBuffer {
 public:
  static constexpr size_t kDefaultCapacity = 16 * 1024;

  // REQUIRES: capacity > 0.
  explicit TcpReceiveBuffer(size_t capacity = kDefaultCapacity);
  TcpReceiveBuffer(const TcpReceiveBuffer&) = delete;
  TcpReceiveBuffer& operator=(const TcpReceiveBuffer&) = delete;

  // Fills [dst, dst + size) from the buffer, then from `fd`. Errors as RecvAll (tcp_socket.h):
  // kUnavailable on EOF or a socket error, kDeadlineExceeded when `deadline` passes or no byte
  // arrives for `max_stall`. After an error the stream position is lost: stop reading.
  absl::Status ReadExact(int fd, void* dst, size_t size, absl::Time deadline,
                         absl::Duration max_stall = absl::InfiniteDuration());

  // Fills [dst, dst + n) for some 1 <= n <= size and returns n: buffered bytes first, else one
  // recv() (straight into `dst` when size >= capacity). kDeadlineExceeded when `deadline` passes
  // first — then nothing was consumed and the stream position is intact; other errors as ReadExact.
  // REQUIRES: size > 0.
  absl::StatusOr<size_t> ReadSome(int fd, void* dst, size_t size, absl::Time deadline);

  // Bytes received and not yet handed out.
  size_t buffered() const { return end_ - begin_; }

 private:
  // Hands out up to `size` buffered bytes; returns how many.
  size_t TakeBuffered(uint8_t* dst, size_t size);

  const size_t capacity_;
  const std::unique_ptr<uint8_t[]> data_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TCP_RECEIVE_BUFFER_H_
