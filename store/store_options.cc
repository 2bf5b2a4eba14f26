#include "store/store_options.h"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/un.h>

#include <bit>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

#include "protocol/base/status.h"

namespace rplasma {

absl::Status StoreOptions::Validate() const {
  RETURN_IF_ERROR(metrics.Validate());
  if (socket_path.empty()) return MakeError(ErrorCode::kInvalidArgument, "store: --socket must not be empty");
  if (socket_path.size() >= sizeof(sockaddr_un::sun_path)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("store: socket path longer than ", sizeof(sockaddr_un::sun_path) - 1, " bytes: ", socket_path));
  }
  if (memory_bytes == 0) return MakeError(ErrorCode::kInvalidArgument, "store: --memory must be > 0");
  if (name.empty() || name.size() > 256) {
    return MakeError(ErrorCode::kInvalidArgument, "store: --name must be 1..256 bytes");
  }
  if (max_frame_bytes < 1024) return MakeError(ErrorCode::kInvalidArgument, "store: max_frame_bytes < 1024");
  if (partial_frame_timeout <= absl::ZeroDuration()) {
    return MakeError(ErrorCode::kInvalidArgument, "store: --partial-frame-timeout must be > 0");
  }
  if (max_partial_frame_bytes < max_frame_bytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("store: --max-partial-frame-bytes must be at least the largest frame (",
                                  max_frame_bytes, " bytes)"));
  }
  if (pause_input_bytes == 0 || pause_input_bytes >= max_output_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, "store: need 0 < pause_input_bytes < max_output_bytes");
  }
  const auto power_of_two_from_16 = [](uint64_t n) { return n >= 16 && std::has_single_bit(n); };
  if (index_entries.has_value() && *index_entries != 0 &&
      (!power_of_two_from_16(*index_entries) || *index_entries > (uint64_t{1} << 24))) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("store: --index-entries must be 0 or a power of two in [16, 2^24], not ", *index_entries));
  }
  if (!power_of_two_from_16(slots_per_client) || slots_per_client > (uint64_t{1} << 24)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("store: --slots-per-client must be a power of two in [16, 2^24], not ", slots_per_client));
  }
  return absl::OkStatus();
}

absl::StatusOr<Hugepages> ParseHugepages(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty() || text == "off") return Hugepages{};
  if (text == "on") return Hugepages{.enabled = true, .page_size = 0};
  if (text.front() == '/') {
    const std::string dir(text);
    struct statfs fs {};
    if (::statfs(dir.c_str(), &fs) != 0) return ErrnoError("statfs", absl::StrCat("--hugepages ", dir), errno);
    // Anything else would silently mean a page size the operator did not ask for.
    if (static_cast<uint64_t>(fs.f_type) != HUGETLBFS_MAGIC) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("--hugepages ", dir, ": not a hugetlbfs mount"));
    }
    return Hugepages{.enabled = true, .page_size = static_cast<uint64_t>(fs.f_bsize)};
  }
  absl::StatusOr<uint64_t> size = ParseByteSize(text);
  if (!size.ok() || !std::has_single_bit(*size) || *size <= 4096) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("--hugepages '", text,
                     "': expected on, off, a huge page size (e.g. 2M, 1G) or a hugetlbfs mount directory"));
  }
  return Hugepages{.enabled = true, .page_size = *size};
}

}  // namespace rplasma
