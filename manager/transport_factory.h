// MakeTransport: the --transport choice. `tcp` and `verbs` as named; `auto` is verbs when the host
// has an RDMA device (IsVerbsDeviceAvailable), else tcp with `fell_back` set (counted in stats).
// A build without verbs (-DRPLASMA_WITH_VERBS=OFF) refuses `verbs` and treats `auto` as tcp.
#ifndef RPLASMA_MANAGER_TRANSPORT_FACTORY_H_
#define RPLASMA_MANAGER_TRANSPORT_FACTORY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

#include "manager/transport/transport.h"

namespace rplasma::manager {

struct MadeTransport {
  std::unique_ptr<transport::Transport> transport;
  bool fell_back = false;  // auto chose tcp
};

absl::StatusOr<MadeTransport> MakeTransport(const std::string& choice, const transport::TransportOptions& options);

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_TRANSPORT_FACTORY_H_
