// Loopback HTTP for the daemons' /metrics endpoints, as benchmarks and tests reach them: a port
// free for a daemon's --metrics-port, and one request/reply exchange on 127.0.0.1.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_LOOPBACK_HTTP_H_
#define RPLASMA_BENCH_MPI_LAUNCH_LOOPBACK_HTTP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "protocol/base/unique_fd.h"

namespace rplasma::bench {

// A TCP port on 127.0.0.1 free now (an ephemeral bind, released at once).
absl::StatusOr<uint16_t> UnusedLoopbackPort();

// A TCP connection to 127.0.0.1:`port` (kUnavailable if nobody accepts).
absl::StatusOr<UniqueFd> LoopbackConnect(uint16_t port);

// Sends `request` as is to 127.0.0.1:`port` and returns every byte of the reply, read to EOF (the
// /metrics server closes after each answer). kUnavailable if the connect or the send fails.
absl::StatusOr<std::string> LoopbackHttpExchange(uint16_t port, absl::string_view request);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_LOOPBACK_HTTP_H_
