// The transport contract (tests/support/transport_contract.h) over the fetch tests' FakeChannel:
// the fake the fetch engine's unit tests stand on keeps the promises of the real transports.
#include <cstring>
#include <memory>
#include <vector>

#include "tests/support/transport_contract.h"
#include "tests/unit/fetch/fetch_fakes.h"

namespace rplasma::testing {
namespace {

class FakeChannelContractSetup {
 public:
  // The owner's bytes are copied into its FakeLocalStore's arena, which FakeChannel reads.
  absl::Status Start(transport::RequestHandler* handler, std::vector<uint8_t>* owner, std::vector<uint8_t>* reader) {
    store_ = std::make_unique<FakeLocalStore>(owner->size());
    std::memcpy(store_->arena_base(), owner->data(), owner->size());
    channel_ = std::make_shared<FakeChannel>(handler, store_.get(), /*conn_id=*/1);
    return absl::OkStatus();
  }
  std::shared_ptr<transport::Channel> channel() { return channel_; }
  transport::RemoteRegion RegionFor(uint64_t offset, uint64_t length) { return {offset, length, 0}; }

 private:
  std::unique_ptr<FakeLocalStore> store_;
  std::shared_ptr<FakeChannel> channel_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(FakeChannel, TransportContractTest, ::testing::Types<FakeChannelContractSetup>);

}  // namespace
}  // namespace rplasma::testing
