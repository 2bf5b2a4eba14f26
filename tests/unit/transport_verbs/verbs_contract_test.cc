// The transport contract (tests/support/transport_contract.h) over verbs: runs in the Soft-RoCE
// guest, skips where there is no RDMA device.
#include <memory>
#include <string>
#include <vector>

#include "manager/transport/verbs/verbs_transport.h"
#include "protocol/base/status.h"
#include "tests/support/transport_contract.h"
#include "tests/unit/transport_verbs/verbs_test_env.h"

namespace rplasma::transport {
namespace {

class VerbsContractSetup {
 public:
  ~VerbsContractSetup() {
    if (reader_) reader_->Shutdown();
    if (owner_) owner_->Shutdown();
  }
  absl::Status Start(RequestHandler* handler, std::vector<uint8_t>* owner, std::vector<uint8_t>* reader) {
    std::string why;
    const std::string ip = testing::VerbsTestIp(&why);
    if (ip.empty()) return absl::FailedPreconditionError(why);
    TransportOptions options;
    options.secret = "contract";
    options.message_bytes = 4096;  // small buffers: fragmentation shows up at a few KiB
    options.queue_depth = 16;
    options.read_chunk_bytes = 256 << 10;
    options.max_reads_in_flight = 4;
    options.connect_timeout = absl::Seconds(20);
    ASSIGN_OR_RETURN(owner_, VerbsTransport::Create(options));
    RETURN_IF_ERROR(owner_->RegisterArena(owner->data(), owner->size()));
    ASSIGN_OR_RETURN(std::string address, owner_->Listen(ip + ":0", handler));
    ASSIGN_OR_RETURN(reader_, VerbsTransport::Create(options));
    RETURN_IF_ERROR(reader_->RegisterArena(reader->data(), reader->size()));
    ASSIGN_OR_RETURN(channel_, reader_->Connect(address, absl::Now() + absl::Seconds(30)));
    return absl::OkStatus();
  }
  std::shared_ptr<Channel> channel() { return channel_; }
  RemoteRegion RegionFor(uint64_t offset, uint64_t length) { return owner_->RegionFor(offset, length); }

 private:
  std::unique_ptr<VerbsTransport> owner_, reader_;
  std::shared_ptr<Channel> channel_;
};

}  // namespace
}  // namespace rplasma::transport

namespace rplasma::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Verbs, TransportContractTest, ::testing::Types<transport::VerbsContractSetup>);
}  // namespace rplasma::testing
