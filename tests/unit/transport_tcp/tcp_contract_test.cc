// The transport contract (tests/support/transport_contract.h) over tcp on loopback.
#include <memory>
#include <string>
#include <vector>

#include "manager/transport/tcp/tcp_transport.h"
#include "protocol/base/status.h"
#include "tests/support/transport_contract.h"
#include "tests/unit/transport_tcp/tcp_test_util.h"

namespace rplasma::transport {
namespace {

class TcpContractSetup {
 public:
  ~TcpContractSetup() {
    if (reader_) reader_->Shutdown();
    if (owner_) owner_->Shutdown();
  }
  absl::Status Start(RequestHandler* handler, std::vector<uint8_t>* owner, std::vector<uint8_t>* reader) {
    ASSIGN_OR_RETURN(owner_, tcp::TcpTransport::Create(testing::OptionsWithSecret("contract")));
    RETURN_IF_ERROR(owner_->RegisterArena(owner->data(), owner->size()));
    ASSIGN_OR_RETURN(std::string address, owner_->Listen("127.0.0.1:0", handler));
    ASSIGN_OR_RETURN(reader_, tcp::TcpTransport::Create(testing::OptionsWithSecret("contract")));
    RETURN_IF_ERROR(reader_->RegisterArena(reader->data(), reader->size()));
    ASSIGN_OR_RETURN(channel_, reader_->Connect(address, testing::Deadline()));
    return absl::OkStatus();
  }
  std::shared_ptr<Channel> channel() { return channel_; }
  RemoteRegion RegionFor(uint64_t offset, uint64_t length) { return owner_->RegionFor(offset, length); }

 private:
  std::unique_ptr<tcp::TcpTransport> owner_, reader_;
  std::shared_ptr<Channel> channel_;
};

}  // namespace
}  // namespace rplasma::transport

namespace rplasma::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Tcp, TransportContractTest, ::testing::Types<transport::TcpContractSetup>);
}  // namespace rplasma::testing
