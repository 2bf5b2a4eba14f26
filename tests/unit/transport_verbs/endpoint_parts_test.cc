// The verbs endpoint's device-free parts: SendCredits, Reassembler, CallTable, SpinWindow,
// ReadProgress.
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "manager/transport/verbs/call_table.h"
#include "manager/transport/verbs/read_plan.h"
#include "manager/transport/verbs/reassembler.h"
#include "manager/transport/verbs/send_credits.h"
#include "manager/transport/verbs/spin_window.h"
#include "tests/support/status_matchers.h"

namespace rplasma::transport::verbs {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(SendCreditsTest, AMessageNeedsACreditAndASlotACreditMessageOnlyASlot) {
  SendCredits credits(2);
  EXPECT_FALSE(credits.CanSend()) << "no credit before the peer's grant";
  credits.Start(3);
  ASSERT_TRUE(credits.CanSend());
  const uint32_t first = credits.TakeForMessage();
  const uint32_t second = credits.TakeForMessage();
  EXPECT_EQ(std::set<uint32_t>({first, second}), std::set<uint32_t>({0, 1}));
  EXPECT_EQ(credits.credits(), 1u);
  EXPECT_FALSE(credits.CanSend()) << "a credit left but no send buffer";
  EXPECT_EQ(credits.TakeForCreditMessage(), std::nullopt);
  credits.ReturnSlot(first);
  ASSERT_TRUE(credits.CanSend());
  EXPECT_EQ(credits.TakeForCreditMessage(), first) << "a credit message takes a buffer";
  EXPECT_EQ(credits.credits(), 1u) << "and no credit";
}

TEST(SendCreditsTest, ThePeerCannotReturnMoreThanItGranted) {
  SendCredits credits(4);
  credits.Start(2);
  credits.TakeForMessage();
  credits.TakeForMessage();
  EXPECT_OK(credits.Returned(1));
  EXPECT_THAT(credits.Returned(2), HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_EQ(credits.credits(), 1u) << "a refused return changes nothing";
  EXPECT_OK(credits.Returned(1));
  EXPECT_EQ(credits.credits(), 2u);
  EXPECT_THAT(credits.Returned(1), HasErrorCode(ErrorCode::kProtocolError));
}

TEST(SendCreditsTest, OwedCreditsAreTakenOnce) {
  SendCredits credits(1);
  credits.Owe();
  credits.Owe();
  EXPECT_EQ(credits.owed(), 2u);
  EXPECT_EQ(credits.TakeOwed(), 2u);
  EXPECT_EQ(credits.owed(), 0u);
  EXPECT_EQ(credits.TakeOwed(), 0u);
}

MessageHeader Fragment(uint64_t id, uint64_t total, uint64_t offset) {
  MessageHeader h;
  h.type = MessageType::kRequest;
  h.request_id = id;
  h.total_length = total;
  h.offset = offset;
  return h;
}

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(ReassemblerTest, InterleavedFragmentsBecomeWholeMessages) {
  Reassembler r(4);
  const std::string a = "abcdefgh", b = "0123456789";
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> out, r.Add(Fragment(1, a.size(), 0), Bytes(a.substr(0, 3))));
  EXPECT_FALSE(out.has_value());
  ASSERT_OK_AND_ASSIGN(out, r.Add(Fragment(2, b.size(), 0), Bytes(b.substr(0, 6))));
  EXPECT_FALSE(out.has_value());
  EXPECT_EQ(r.partial(), 2u);
  ASSERT_OK_AND_ASSIGN(out, r.Add(Fragment(1, a.size(), 3), Bytes(a.substr(3))));
  EXPECT_EQ(out, a);
  ASSERT_OK_AND_ASSIGN(out, r.Add(Fragment(2, b.size(), 6), Bytes(b.substr(6))));
  EXPECT_EQ(out, b);
  EXPECT_EQ(r.partial(), 0u);
  ASSERT_OK_AND_ASSIGN(out, r.Add(Fragment(3, 0, 0), {}));
  EXPECT_EQ(out, std::string()) << "an empty message is whole at once";
}

TEST(ReassemblerTest, FragmentsThatContradictEachOtherAreProtocolErrors) {
  Reassembler r(1);
  const std::string x(8, 'x');
  ASSERT_OK(r.Add(Fragment(1, 16, 0), Bytes(x)).status());
  EXPECT_THAT(r.Add(Fragment(2, 16, 0), Bytes(x)).status(), HasErrorCode(ErrorCode::kProtocolError))
      << "a second partial message over the limit";
  EXPECT_THAT(r.Add(Fragment(1, 32, 8), Bytes(x)).status(), HasErrorCode(ErrorCode::kProtocolError))
      << "a different total length";
  EXPECT_THAT(r.Add(Fragment(1, 16, 12), Bytes(x)).status(), HasErrorCode(ErrorCode::kProtocolError))
      << "bytes past the end";
  Reassembler twice(1);
  ASSERT_OK(twice.Add(Fragment(1, 12, 0), Bytes(x)).status());
  EXPECT_THAT(twice.Add(Fragment(1, 12, 0), Bytes(x)).status(), HasErrorCode(ErrorCode::kProtocolError))
      << "more bytes received than the length";
}

TEST(CallTableTest, RepliesCompleteTheirCallsOnceAndLateOnesAreDropped) {
  CallTable table;
  CallTable::Call a, b;
  const uint64_t ia = table.Add(&a);
  const uint64_t ib = table.Add(&b);
  EXPECT_NE(ia, 0u);
  EXPECT_NE(ia, ib);
  EXPECT_TRUE(table.Complete(ib, std::string("reply b")));
  EXPECT_TRUE(b.done);
  EXPECT_EQ(*b.result, "reply b");
  EXPECT_FALSE(table.Complete(ib, std::string("again"))) << "a call is completed once";
  EXPECT_EQ(*b.result, "reply b");
  table.Remove(ia);  // its caller gave up
  EXPECT_FALSE(table.Complete(ia, std::string("late")));
  EXPECT_FALSE(a.done);
  EXPECT_FALSE(table.Complete(12345, std::string("unknown")));
}

TEST(CallTableTest, AFailureFailsOnlyTheCallsStillWaiting) {
  CallTable table;
  CallTable::Call done, waiting;
  table.Complete(table.Add(&done), std::string("ok"));
  table.Add(&waiting);
  table.FailAll(MakeError(ErrorCode::kUnavailable, "connection failed"));
  EXPECT_EQ(*done.result, "ok");
  ASSERT_TRUE(waiting.done);
  EXPECT_THAT(waiting.result.status(), HasErrorCode(ErrorCode::kUnavailable));
}

TEST(SpinWindowTest, GrowsWhenASpinGaveUpTooEarlyAndShrinksWhenTrafficIsSparse) {
  const absl::Duration spin = absl::Microseconds(50);
  EXPECT_EQ(SpinWindowCap(spin), absl::Microseconds(800));
  EXPECT_EQ(SpinWindowCap(absl::Milliseconds(1)), absl::Milliseconds(2));
  EXPECT_EQ(SpinWindowCap(absl::Milliseconds(10)), absl::Milliseconds(10));
  SpinWindow w(spin);
  EXPECT_EQ(w.get(), spin);
  absl::Time t = absl::UnixEpoch();
  for (absl::Duration expected : {absl::Microseconds(100), absl::Microseconds(200), absl::Microseconds(400),
                                  absl::Microseconds(800), absl::Microseconds(800)}) {
    w.RanDry(t);
    EXPECT_TRUE(w.dry());
    t += absl::Microseconds(300);  // within the cap: the spin gave up too early
    w.Completed(t);
    EXPECT_FALSE(w.dry());
    EXPECT_EQ(w.get(), expected);
  }
  for (absl::Duration expected : {absl::Microseconds(400), absl::Microseconds(200), absl::Microseconds(100),
                                  absl::Microseconds(50), absl::Microseconds(50)}) {
    w.RanDry(t);
    t += absl::Milliseconds(5);  // longer than the cap: sparse traffic
    w.Completed(t);
    EXPECT_EQ(w.get(), expected);
  }
}

TEST(SpinWindowTest, TheQuietPeriodCountsFromTheFirstDrySpinAndCompletionsWithoutOneChangeNothing) {
  SpinWindow w(absl::Microseconds(50));
  const absl::Time t0 = absl::UnixEpoch();
  w.Completed(t0 + absl::Seconds(1));
  EXPECT_EQ(w.get(), absl::Microseconds(50)) << "no dry spin, nothing to adapt";
  w.RanDry(t0);
  w.RanDry(t0 + absl::Microseconds(700));     // a later dry spin in the same quiet period
  w.Completed(t0 + absl::Microseconds(900));  // 900 us after the first: beyond the 800 us cap
  EXPECT_EQ(w.get(), absl::Microseconds(50)) << "halved, floored at cq_spin";
}

TEST(ReadProgressTest, ChunksArePostedInOrderAndTheReadSucceedsOnlyWhenAllCameBack) {
  ReadProgress op(10, 4);
  std::vector<std::pair<uint64_t, uint64_t>> posted;
  while (op.more_to_post()) {
    posted.emplace_back(op.Next().offset, op.Next().length);
    op.Posted();
  }
  EXPECT_EQ(posted, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 4}, {4, 4}, {8, 2}}));
  EXPECT_EQ(op.outstanding(), 3u);
  EXPECT_FALSE(op.succeeded());
  op.Completed(absl::OkStatus());
  op.Completed(absl::OkStatus());
  EXPECT_FALSE(op.succeeded()) << "one READ still out";
  op.Completed(absl::OkStatus());
  EXPECT_TRUE(op.all_back());
  EXPECT_TRUE(op.succeeded());
}

TEST(ReadProgressTest, AFailureStopsPostingKeepsTheFirstErrorAndStillWaitsForEveryRead) {
  ReadProgress op(100, 10);
  op.Posted();
  op.Posted();
  op.Completed(MakeError(ErrorCode::kInvalidArgument, "bad rkey"));
  EXPECT_FALSE(op.more_to_post()) << "nothing is posted after a failure";
  EXPECT_FALSE(op.all_back());
  op.Completed(MakeError(ErrorCode::kUnavailable, "flushed"));
  EXPECT_TRUE(op.all_back());
  EXPECT_FALSE(op.succeeded());
  EXPECT_THAT(op.status(), HasErrorCode(ErrorCode::kInvalidArgument)) << "the first failure is kept";
  ReadProgress failed_to_post(100, 10);
  failed_to_post.Fail(MakeError(ErrorCode::kUnavailable, "post failed"));
  EXPECT_FALSE(failed_to_post.more_to_post());
  EXPECT_TRUE(failed_to_post.all_back());
  EXPECT_FALSE(failed_to_post.succeeded());
}

}  // namespace
}  // namespace rplasma::transport::verbs
