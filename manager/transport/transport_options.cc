#include "absl/strings/str_cat.h"

#include "manager/transport/transport.h"
#include "protocol/base/status.h"

namespace rplasma::transport {

absl::Status TransportOptions::Validate() const {
  auto invalid = [](absl::string_view what) { return MakeError(ErrorCode::kInvalidArgument, what); };
  if (qp_timeout < 1 || qp_timeout > 31) return invalid("qp_timeout must be 1..31 (0 would wait forever)");
  if (retry_count < 0 || retry_count > 7) return invalid("retry_count must be 0..7");
  if (rnr_retry < 0 || rnr_retry > 6) return invalid("rnr_retry must be 0..6 (7 would retry forever)");
  if (queue_depth < 4 || queue_depth > 4096) return invalid("queue_depth must be 4..4096");
  if (message_bytes < 4096 || message_bytes > (16u << 20)) return invalid("message_bytes must be 4 KiB..16 MiB");
  if (max_reads_in_flight < 1 || max_reads_in_flight > 1024) return invalid("max_reads_in_flight must be 1..1024");
  if (read_chunk_bytes < 4096 || read_chunk_bytes > (1ull << 30))
    return invalid("read_chunk_bytes must be 4 KiB..1 GiB");
  if (connect_timeout <= absl::ZeroDuration()) return invalid("connect_timeout must be positive");
  if (handshake_timeout < absl::Milliseconds(10) || handshake_timeout > absl::Minutes(1)) {
    return invalid("handshake_timeout must be 10 ms..1 min");
  }
  if (max_handshakes < 1 || max_handshakes > 65536) return invalid("max_handshakes must be 1..65536");
  if (max_handshakes_per_source < 1 || max_handshakes_per_source > max_handshakes) {
    return invalid("max_handshakes_per_source must be 1..max_handshakes");
  }
  if (cq_spin < absl::ZeroDuration() || cq_spin > absl::Milliseconds(10)) return invalid("cq_spin must be 0..10 ms");
  return absl::OkStatus();
}

}  // namespace rplasma::transport
