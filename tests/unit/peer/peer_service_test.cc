// The serving side of the peer protocol over a fake store (the store's own ObjectTable) and a
// fake clock: leases, and FetchBatch replies gathered from the arena.
#include "manager/peer/peer_service.h"

#include <memory>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "manager/peer/peer_messages.h"
#include "tests/support/fake_clock.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"
#include "tests/support/wait_for.h"
#include "tests/unit/peer/peer_fakes.h"

namespace rplasma::peer {
namespace {

class PeerServiceTest : public ::testing::Test {
 protected:
  PeerServiceTest() : owner_(64 << 20) {
    PeerServiceOptions options;
    options.leases.ttl = absl::Seconds(30);
    service_ = *PeerService::Create(options, &owner_, testing::ArenaRegion);
  }
  ~PeerServiceTest() override { service_->Shutdown(); }

  testing::FakeClock clock_;
  testing::FakeLocalStore owner_;
  std::unique_ptr<PeerService> service_;
};

TEST_F(PeerServiceTest, APinNobodyUnpinsIsReleasedWhenItsLeaseRunsOutOnTheServicesClock) {
  PeerServiceOptions options;
  options.leases.ttl = absl::Seconds(30);
  options.reap_interval = absl::Milliseconds(5);
  options.clock = &clock_;
  std::unique_ptr<PeerService> service = *PeerService::Create(options, &owner_, testing::ArenaRegion);
  const ObjectID id = ObjectID::FromLabel("pinned, never unpinned");
  owner_.Put(id, testing::TestBytes(11, 5000));
  const std::string wire = service->HandleCall(3, EncodeRequest(PinRequest{id})).Flatten();
  absl::StatusOr<PeerReplyView> reply = DecodeReply(wire);
  ASSERT_OK(reply.status());
  const auto* pin = std::get_if<PinReply>(&*reply);
  ASSERT_NE(pin, nullptr);
  const transport::RemoteRegion region = pin->region;
  EXPECT_EQ(owner_.total_refs(), 1) << "the pin holds a store reference";
  clock_.Advance(absl::Seconds(29));
  EXPECT_TRUE(service->AllowRead(3, region)) << "1 s of the lease left on the service's clock";
  clock_.Advance(absl::Seconds(2));
  EXPECT_FALSE(service->AllowRead(3, region)) << "the TTL has passed on the service's clock";
  EXPECT_TRUE(::rplasma::testing::WaitFor([&] { return owner_.total_refs() == 0; }, absl::Seconds(5)))
      << "the reaper released the pin";
  service->Shutdown();
}

// A Get probe sends its bytes from the arena, as a FetchBatch's inline bytes go (no copy into the
// reply): it must cost what a Get costs, or the calibrated threshold favours Pin.
TEST_F(PeerServiceTest, AGetProbeSendsItsBytesFromTheArena) {
  const uint64_t bytes = 1 << 20;
  const transport::CallReply reply = service_->HandleCall(5, EncodeRequest(ProbeGetRequest{bytes}));
  ASSERT_EQ(reply.tail.size(), 1u);
  EXPECT_EQ(reply.tail[0].size(), bytes);
  const uint8_t* view = reinterpret_cast<const uint8_t*>(reply.tail[0].data());
  EXPECT_TRUE(view >= owner_.arena_base() && view + bytes <= owner_.arena_base() + owner_.arena_size())
      << "a view of the probe object, not a copy";
  const std::string wire = reply.Flatten();
  ASSERT_OK_AND_ASSIGN(PeerReplyView decoded, DecodeReply(wire));
  const auto* get = std::get_if<GetReplyView>(&decoded);
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->payload.size(), bytes);
  EXPECT_EQ(get->object.data_size, bytes);
}

// Gather on send: the inline objects' bytes are the reply's tail, views of the pinned objects
// (no copy into the reply); their pins end when the transport drops the reply, the leases stay.
TEST_F(PeerServiceTest, AFetchBatchReplyCarriesInlineBytesAsViewsHeldUntilTheReplyIsDropped) {
  const ObjectID a = ObjectID::FromLabel("gather a");
  const ObjectID b = ObjectID::FromLabel("gather b");
  const ObjectID large = ObjectID::FromLabel("gather large");
  owner_.Put(a, testing::TestBytes(1, 1000), "m");
  owner_.Put(b, testing::TestBytes(2, 2000));
  owner_.Put(large, testing::TestBytes(3, 300000));
  auto reply = std::make_unique<transport::CallReply>(
      service_->HandleCall(5, EncodeRequest(FetchBatchRequest{{a, b, large}, 4096, 1 << 20})));
  ASSERT_EQ(reply->tail.size(), 2u);
  EXPECT_EQ(reply->tail[0], testing::TestBytes(1, 1000) + "m");
  EXPECT_EQ(reply->tail[1], testing::TestBytes(2, 2000));
  EXPECT_EQ(owner_.total_refs(), 3) << "two pins held for the inline bytes, one lease";
  const std::string wire = reply->Flatten();
  ASSERT_OK_AND_ASSIGN(PeerReplyView decoded, DecodeReply(wire));
  const auto& batch = std::get<FetchBatchReplyView>(decoded);
  ASSERT_EQ(batch.objects.size(), 3u);
  EXPECT_EQ(std::get<GetReplyView>(*batch.objects[1]).payload, testing::TestBytes(2, 2000));
  EXPECT_TRUE(std::holds_alternative<PinReply>(*batch.objects[2]));
  reply.reset();
  EXPECT_EQ(owner_.total_refs(), 1) << "the inline pins end with the reply; the lease stays";
  service_->OnDisconnect(5);
  EXPECT_EQ(owner_.total_refs(), 0);
}

}  // namespace
}  // namespace rplasma::peer
