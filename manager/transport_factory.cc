#include "manager/transport_factory.h"

#include "manager/transport/tcp/tcp_transport.h"
#include "protocol/base/logging.h"
#include "protocol/base/status.h"
#ifdef RPLASMA_WITH_VERBS
#include "manager/transport/verbs/verbs_transport.h"
#endif

namespace rplasma::manager {

absl::StatusOr<MadeTransport> MakeTransport(const std::string& choice, const transport::TransportOptions& options) {
  MadeTransport made;
  bool verbs = choice == "verbs";
#ifdef RPLASMA_WITH_VERBS
  if (choice == "auto") {
    verbs = transport::IsVerbsDeviceAvailable();
    made.fell_back = !verbs;
    if (!verbs) LOG(INFO) << "--transport auto: no RDMA device, using tcp";
  }
  if (verbs) {
    ASSIGN_OR_RETURN(made.transport, transport::VerbsTransport::Create(options));
    return made;
  }
#else
  if (verbs) return MakeError(ErrorCode::kInvalidArgument, "--transport verbs: this build has no verbs transport");
  made.fell_back = choice == "auto";
#endif
  ASSIGN_OR_RETURN(made.transport, transport::tcp::TcpTransport::Create(options));
  return made;
}

}  // namespace rplasma::manager
