#include "manager/transport/verbs/connect_seams.h"

#include <algorithm>

#include "manager/transport/verbs/auth_port.h"
#include "manager/transport/verbs/socket_address.h"
#include "protocol/base/status.h"

namespace rplasma::transport::verbs {
namespace {

class AuthPortTicketSource : public TicketSource {
 public:
  AuthPortTicketSource(std::string secret, absl::Duration connect_timeout)
      : secret_(std::move(secret)), connect_timeout_(connect_timeout) {}

  absl::StatusOr<std::string> Fetch(const std::string& address, absl::Time deadline) override {
    ASSIGN_OR_RETURN(sockaddr_storage addr, ResolveHostPort(address));
    ASSIGN_OR_RETURN(Ticket t, RequestTicket(addr, secret_, std::min(deadline, absl::Now() + connect_timeout_)));
    return std::string(reinterpret_cast<const char*>(t.data()), t.size());
  }

 private:
  const std::string secret_;
  const absl::Duration connect_timeout_;
};

}  // namespace

std::shared_ptr<TicketSource> MakeAuthPortTicketSource(std::string secret, absl::Duration connect_timeout) {
  return std::make_shared<AuthPortTicketSource>(std::move(secret), connect_timeout);
}

}  // namespace rplasma::transport::verbs
