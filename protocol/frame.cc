#include "protocol/frame.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

#include "protocol/base/socket_io.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

void PutLe32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutLe16(uint16_t v, char* out) {
  out[0] = static_cast<char>(v & 0xff);
  out[1] = static_cast<char>(v >> 8);
}
uint32_t GetLe32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return v;
}
uint16_t GetLe16(const char* in) {
  return static_cast<uint16_t>(static_cast<uint8_t>(in[0]) | (static_cast<uint8_t>(in[1]) << 8));
}

}  // namespace

void EncodeFrameHeader(uint32_t length, char out[kFrameHeaderBytes]) {
  PutLe32(length, out);
  PutLe16(kProtocolVersion, out + 4);
  PutLe16(0, out + 6);
}

std::string EncodeFrame(absl::string_view payload) {
  std::string out(kFrameHeaderBytes + payload.size(), '\0');
  EncodeFrameHeader(static_cast<uint32_t>(payload.size()), out.data());
  std::memcpy(out.data() + kFrameHeaderBytes, payload.data(), payload.size());
  return out;
}

absl::StatusOr<uint32_t> ParseFrameHeader(const char header[kFrameHeaderBytes], uint32_t max_frame_bytes) {
  uint32_t length = GetLe32(header);
  uint16_t version = GetLe16(header + 4);
  uint16_t reserved = GetLe16(header + 6);
  if (version != kProtocolVersion) {
    return ProtocolError(absl::StrCat("frame: protocol version ", version, ", expected ", kProtocolVersion));
  }
  if (reserved != 0) return ProtocolError("frame: reserved header bits set");
  if (length == 0) return ProtocolError("frame: empty payload");
  if (length > max_frame_bytes) {
    return ProtocolError(absl::StrCat("frame: length ", length, " exceeds the cap of ", max_frame_bytes));
  }
  return length;
}

absl::Status WriteFrame(int fd, absl::string_view payload) {
  if (payload.size() > UINT32_MAX) return MakeError(ErrorCode::kInvalidArgument, "frame: payload too large");
  std::string frame = EncodeFrame(payload);
  return WriteAll(fd, frame.data(), frame.size());
}

absl::StatusOr<std::string> ReadFrame(int fd, uint32_t max_frame_bytes, absl::Time deadline) {
  char header[kFrameHeaderBytes];
  RETURN_IF_ERROR(ReadAllUntil(fd, header, sizeof(header), deadline));
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(header, max_frame_bytes));
  std::string payload(length, '\0');
  RETURN_IF_ERROR(ReadAllUntil(fd, payload.data(), length, deadline));
  return payload;
}

absl::Status FrameReader::ReadFrom(int fd) {
  char chunk[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < sizeof(chunk)) return absl::OkStatus();
      continue;
    }
    if (n == 0) return MakeError(ErrorCode::kUnavailable, "read(socket): connection closed");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
    return MakeError(ErrorCode::kUnavailable, ErrnoError("read", "socket", errno).message());
  }
}

absl::StatusOr<std::optional<std::string>> FrameReader::Next() {
  size_t available = buffer_.size() - consumed_;
  if (available < kFrameHeaderBytes) {
    if (consumed_ > 0 && available == 0) {
      buffer_.clear();
      consumed_ = 0;
    }
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(uint32_t length, ParseFrameHeader(buffer_.data() + consumed_, max_frame_bytes_));
  if (available < kFrameHeaderBytes + length) return std::nullopt;
  std::string payload = buffer_.substr(consumed_ + kFrameHeaderBytes, length);
  consumed_ += kFrameHeaderBytes + length;
  // Compact once the consumed prefix dominates, so the buffer does not grow without bound.
  if (consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return payload;
}

}  // namespace rplasma
