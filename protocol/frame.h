// Framing for the local Unix sockets: an application or the manager to its store, and an
// application to its manager's client socket. (Peer connections between managers have their own
// wire formats: manager/transport/tcp/tcp_wire.h and manager/transport/verbs/wire_format.h.)
//
// A frame is an 8-byte header followed by `length` payload bytes (a flatbuffer):
//
//   offset 0  uint32 length   little-endian, payload bytes, 1 .. max_frame_bytes
//   offset 4  uint16 version  kProtocolVersion
//   offset 6  uint16 reserved must be 0
//
// The header is validated (length cap, version) before any payload memory is allocated, so a
// peer can never make us allocate more than the cap. Pure encode/parse functions are separate
// from the fd I/O helpers, and FrameReader assembles frames from a non-blocking fd.
#ifndef RPLASMA_PROTOCOL_FRAME_H_
#define RPLASMA_PROTOCOL_FRAME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rplasma {

inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 8;
// Default cap on a store-protocol frame: far above any legal request (a batch of
// kMaxIdsPerRequest ids is ~100 KiB) and small enough to never be a memory threat.
inline constexpr uint32_t kDefaultMaxFrameBytes = 1u << 20;

// Writes the header for a payload of `length` bytes into `out`.
void EncodeFrameHeader(uint32_t length, char out[kFrameHeaderBytes]);
// Header + payload as one buffer.
std::string EncodeFrame(absl::string_view payload);
// Validates a header; returns the payload length. kProtocolError on a bad version, reserved bits,
// zero length or a length above `max_frame_bytes`.
absl::StatusOr<uint32_t> ParseFrameHeader(const char header[kFrameHeaderBytes], uint32_t max_frame_bytes);

// Blocking I/O of one frame on a connected stream fd.
absl::Status WriteFrame(int fd, absl::string_view payload);
absl::StatusOr<std::string> ReadFrame(int fd, uint32_t max_frame_bytes = kDefaultMaxFrameBytes,
                                      absl::Time deadline = absl::InfiniteFuture());

// Assembles frames from a non-blocking fd. Not thread-safe.
class FrameReader {
 public:
  explicit FrameReader(uint32_t max_frame_bytes = kDefaultMaxFrameBytes) : max_frame_bytes_(max_frame_bytes) {}

  // Reads whatever `fd` has now (until EAGAIN). kUnavailable on EOF or a socket error.
  absl::Status ReadFrom(int fd);
  // Bytes already buffered (for tests that feed data directly).
  void Append(absl::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  // The next complete payload, nullopt if more bytes are needed, or an error for a bad header
  // (after which the stream is unusable and should be closed).
  absl::StatusOr<std::optional<std::string>> Next();
  // True while a frame is partially received.
  bool HasPartialFrame() const { return buffer_.size() > consumed_; }

 private:
  uint32_t max_frame_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_FRAME_H_
