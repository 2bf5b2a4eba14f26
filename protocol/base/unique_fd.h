// UniqueFd: sole owner of a file descriptor; closes it on destruction. Move-only.
#ifndef RPLASMA_PROTOCOL_BASE_UNIQUE_FD_H_
#define RPLASMA_PROTOCOL_BASE_UNIQUE_FD_H_

#include <unistd.h>

#include <utility>

namespace rplasma {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_UNIQUE_FD_H_
