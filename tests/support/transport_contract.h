// The transport contract: what every transport::Channel promises its callers (the fetch engine and
// the peer protocol), written once as type-parameterized tests and run against each transport:
//
//   tcp         tests/unit/transport_tcp/tcp_contract_test.cc      (transport_tcp_unit_test)
//   FakeChannel tests/unit/fetch/fake_channel_contract_test.cc     (fetch_unit_test)
//   verbs       tests/unit/transport_verbs/verbs_contract_test.cc  (verbs_transport_test, in the guest)
//
// A transport takes part with a setup type, and instantiates the suite in namespace rplasma::testing:
//
//   struct MySetup {
//     // Starts a serving side that answers with `handler` and whose registered arena is `owner`,
//     // and a reader whose registered arena is `reader`; connects the reader to it. May skip.
//     absl::Status Start(RequestHandler* handler, std::vector<uint8_t>* owner, std::vector<uint8_t>* reader);
//     std::shared_ptr<Channel> channel();
//     RemoteRegion RegionFor(uint64_t offset, uint64_t length);  // of the owner's arena
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Tcp, TransportContractTest, ::testing::Types<MySetup>);
//
// The promises: a Call's reply is the handler's reply to exactly its request, at every size up to
// the fragmenting ones, whether the handler gave it as one buffer or as a head and many parts (gather
// on send; what keeps the parts valid is dropped once the reply is sent); a Read copies exactly the region's bytes into
// exactly the destination, at any alignment and size; concurrent Calls and Reads on one channel never mix.
#ifndef RPLASMA_TESTS_SUPPORT_TRANSPORT_CONTRACT_H_
#define RPLASMA_TESTS_SUPPORT_TRANSPORT_CONTRACT_H_

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include <gtest/gtest.h>

#include "manager/transport/transport.h"
#include "protocol/base/mutex_lock.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"
#include "tests/support/wait_for.h"

namespace rplasma::testing {

// The handler every contract test serves with: replies "re:" + request, except to "gather:" + P,
// which it answers with the head "g:" and P cut into parts of 1..97 bytes, kept valid by a copy
// of P that it watches (last_keep); allows every Read (the lease rules are the peer service's,
// tested there).
class ContractHandler : public transport::RequestHandler {
 public:
  transport::CallReply HandleCall(uint64_t conn_id, absl::string_view request) override {
    calls.fetch_add(1);
    if (!absl::ConsumePrefix(&request, "gather:")) return absl::StrCat("re:", request);
    auto payload = std::make_shared<const std::string>(request);
    transport::CallReply reply("g:");
    for (size_t at = 0, n = 1; at < payload->size(); at += n, n = n % 97 + 1) {
      reply.tail.push_back(absl::string_view(*payload).substr(at, n));
    }
    MutexLock lock(&mu);
    last_keep = payload;
    reply.keep = std::move(payload);
    return reply;
  }
  bool AllowRead(uint64_t, const transport::RemoteRegion&) override { return true; }
  void OnDisconnect(uint64_t) override {}
  std::atomic<int> calls{0};
  absl::Mutex mu;
  std::weak_ptr<const std::string> last_keep ABSL_GUARDED_BY(mu);
};

template <typename ChannelSetup>
class TransportContractTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kArenaBytes = 8u << 20;

  void SetUp() override {
    owner_ = TestBytes<std::vector<uint8_t>>(1, kArenaBytes);  // never written: Reads compare against it
    reader_.assign(kArenaBytes, 0);
    const absl::Status started = setup_.Start(&handler_, &owner_, &reader_);
    if (absl::IsFailedPrecondition(started)) GTEST_SKIP() << started;  // e.g. no RDMA device here
    ASSERT_OK(started);
    channel_ = setup_.channel();
    ASSERT_NE(channel_, nullptr);
  }

  static absl::Time Deadline() { return absl::Now() + absl::Seconds(60); }

  // Reads owner [offset, +length) to reader [dst, +length); counts bytes that differ, and checks the
  // bytes around the destination stayed untouched.
  void ReadAndCheck(uint64_t offset, uint64_t length, uint64_t dst) {
    std::fill(reader_.begin(), reader_.end(), 0);
    ASSERT_OK(channel_->Read(setup_.RegionFor(offset, length), reader_.data() + dst, Deadline()))
        << length << " bytes at " << offset;
    uint64_t differ = 0;
    for (uint64_t i = 0; i < length; ++i) differ += reader_[dst + i] != owner_[offset + i];
    EXPECT_EQ(differ, 0u) << length << " bytes at " << offset;
    if (dst > 0) {
      EXPECT_EQ(reader_[dst - 1], 0) << "wrote before the destination";
    }
    if (dst + length < reader_.size()) {
      EXPECT_EQ(reader_[dst + length], 0) << "wrote past the destination";
    }
  }

  // Declared before the setup, so they outlive the transports that use them.
  ContractHandler handler_;
  std::vector<uint8_t> owner_, reader_;
  ChannelSetup setup_;
  std::shared_ptr<transport::Channel> channel_;
};

TYPED_TEST_SUITE_P(TransportContractTest);

TYPED_TEST_P(TransportContractTest, ACallsReplyIsTheHandlersReplyToExactlyItsRequestAtEverySize) {
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{4064}, size_t{4065}, size_t{3 * 4096 + 7}, size_t{70000}, size_t{1} << 20}) {
    const std::string request = TestBytes(size, size);
    ASSERT_OK_AND_ASSIGN(std::string reply, this->channel_->Call(request, this->Deadline()));
    EXPECT_TRUE(reply == "re:" + request) << "size " << size << ": a reply of " << reply.size() << " bytes";
  }
  EXPECT_TRUE(this->channel_->healthy());
}

TYPED_TEST_P(TransportContractTest, AReplyGatheredFromManyPartsArrivesAsOneAndItsPartsAreReleased) {
  // Up to ~2,700 parts: more than one sendmsg's IOV_MAX, and across verbs message fragments.
  for (size_t size : {size_t{0}, size_t{1}, size_t{5000}, size_t{70000}, size_t{130000}}) {
    const std::string payload = TestBytes(size + 1, size);
    ASSERT_OK_AND_ASSIGN(std::string reply, this->channel_->Call("gather:" + payload, this->Deadline()));
    EXPECT_TRUE(reply == "g:" + payload) << "size " << size << ": a reply of " << reply.size() << " bytes";
    EXPECT_TRUE(WaitFor(
        [&] {
          MutexLock lock(&this->handler_.mu);
          return this->handler_.last_keep.expired();
        },
        absl::Seconds(10)))
        << "the parts' keeper outlived the reply";
  }
  EXPECT_TRUE(this->channel_->healthy());
}

TYPED_TEST_P(TransportContractTest, AReadCopiesExactlyItsRegionAtAnyAlignmentAndSize) {
  uint64_t dst = 0;
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{4096}, uint64_t{65537}, (uint64_t{1} << 20) + 3,
                        uint64_t{3} << 20}) {
    const uint64_t offset = (size * 13) % 4093;  // unaligned on both sides
    dst = (dst + 4099) % 8191;
    ASSERT_NO_FATAL_FAILURE(this->ReadAndCheck(offset, size, dst));
  }
  ASSERT_NO_FATAL_FAILURE(this->ReadAndCheck(this->kArenaBytes - 100, 100, 0)) << "the arena's last bytes";
}

TYPED_TEST_P(TransportContractTest, ConcurrentCallsAndReadsOnOneChannelNeverMix) {
  constexpr int kThreads = 4, kRounds = 6;
  constexpr uint64_t kSlice = 256 << 10;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint8_t* dst = this->reader_.data() + t * 2 * kSlice;
      for (int i = 0; i < kRounds; ++i) {
        const uint64_t src = ((t * kRounds + i) * 4099) % (this->kArenaBytes - kSlice);
        const std::string request = absl::StrCat(t, ":", i, ":", std::string(1000 * i, 'x'));
        absl::StatusOr<std::string> reply = this->channel_->Call(request, this->Deadline());
        const absl::Status read = this->channel_->Read(this->setup_.RegionFor(src, kSlice), dst, this->Deadline());
        const bool same = read.ok() && std::memcmp(dst, this->owner_.data() + src, kSlice) == 0;
        if (same && reply.ok() && *reply == "re:" + request) good.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(good.load(), kThreads * kRounds);
  EXPECT_GE(this->handler_.calls.load(), kThreads * kRounds);
}

REGISTER_TYPED_TEST_SUITE_P(TransportContractTest, ACallsReplyIsTheHandlersReplyToExactlyItsRequestAtEverySize,
                            AReplyGatheredFromManyPartsArrivesAsOneAndItsPartsAreReleased,
                            AReadCopiesExactlyItsRegionAtAnyAlignmentAndSize,
                            ConcurrentCallsAndReadsOnOneChannelNeverMix);

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_TRANSPORT_CONTRACT_H_
