// A batch's objects of expected sizes are created locally while its request is on the way to the
// owner (TransferBatch's `expected`), so that the reply lands in place: and an expectation that
// turns out wrong costs an abort and a second create, never wrong bytes or a partial object.
// Part of fetch_unit_test (FetchEngineTest's fixture).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/peer/batch_transfer.h"
#include "tests/support/status_matchers.h"
#include "tests/support/wait_for.h"
#include "tests/unit/fetch/fetch_engine_fixture.h"

namespace rplasma::fetch {
namespace {

constexpr uint64_t kSize = 100000;  // inline, and four of them are above the batch's put limit

class EarlyCreateTest : public FetchEngineTest {
 protected:
  // Puts `count` objects of kSize on the owner; their descriptions, as the directory lists them.
  std::vector<ObjectDescription> PutObjects(const std::string& label, int count) {
    std::vector<ObjectDescription> described;
    for (int i = 0; i < count; ++i) {
      ids_.push_back(ObjectID::FromLabel(absl::StrCat(label, " ", i)));
      described.push_back(PutRemote(ids_.back(), testing::TestBytes(i, kSize)).description());
    }
    return described;
  }
  peer::BatchTransferResult Transfer(absl::Span<const ObjectDescription> expected) {
    return peer::TransferBatch(*channel_, local_, ids_, ~uint64_t{0}, clock_.Now() + absl::Seconds(5), options_, clock_,
                               expected);
  }

  std::vector<ObjectID> ids_;
  peer::BatchTransferOptions options_;
};

TEST_F(EarlyCreateTest, ObjectsOfExpectedSizesAreCreatedBeforeTheOwnerAnswers) {
  const std::vector<ObjectDescription> expected = PutObjects("early", 4);
  bool created_before_answer = false;
  channel_->before_call = [&] {
    // The creates go out before the call (this fake store makes them at once): the owner's answer
    // waits here until they are in.
    created_before_answer = ::rplasma::testing::WaitFor([&] { return local_.unsealed() == 4; }, absl::Seconds(5));
  };
  const peer::BatchTransferResult result = Transfer(expected);
  EXPECT_TRUE(created_before_answer) << "the four objects were created while the request was out";
  for (int i = 0; i < 4; ++i) {
    EXPECT_OK(result.statuses[i]) << i;
    EXPECT_EQ(local_.Bytes(ids_[i]), testing::TestBytes(i, kSize)) << i;
  }
  EXPECT_EQ(result.bytes, 4 * kSize);
  EXPECT_EQ(local_.aborts(), 0);
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_EQ(local_.total_refs(), 0);
}

TEST_F(EarlyCreateTest, StartedCreatesDroppedUnfinishedAreAborted) {
  const std::vector<ObjectDescription> expected = PutObjects("dropped", 3);
  local_.StartCreateMany(ids_, expected).reset();
  EXPECT_EQ(local_.aborts(), 3);
  EXPECT_EQ(local_.unsealed(), 0);
  std::unique_ptr<peer::PendingCreates> finished = local_.StartCreateMany(ids_, expected);
  for (const absl::StatusOr<CreatedObject>& created : finished->Finish()) ASSERT_OK(created);
  finished.reset();  // taken: nothing more to abort
  EXPECT_EQ(local_.aborts(), 3);
  EXPECT_EQ(local_.unsealed(), 3);
  for (const ObjectID& id : ids_) ASSERT_OK(local_.Abort(id));
}

TEST_F(EarlyCreateTest, AWrongExpectationIsAbortedAndTheOwnersObjectArrivesIntact) {
  std::vector<ObjectDescription> expected = PutObjects("guess", 4);
  expected[1].data_size = kSize / 2;  // the owner's object changed size since it was listed
  const ObjectID absent = ObjectID::FromLabel("guess absent");
  ids_.push_back(absent);  // listed, but gone from the owner by now
  expected.push_back(expected[0]);
  const peer::BatchTransferResult result = Transfer(expected);
  for (int i = 0; i < 4; ++i) {
    EXPECT_OK(result.statuses[i]) << i;
    EXPECT_EQ(local_.Bytes(ids_[i]), testing::TestBytes(i, kSize)) << i;
  }
  EXPECT_THAT(result.statuses[4], HasErrorCode(ErrorCode::kObjectNotFound));
  EXPECT_FALSE(*local_.Contains(absent)) << "nothing partial of an id the owner failed";
  EXPECT_EQ(local_.aborts(), 2) << "the early objects of the wrong size and of the absent id";
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_EQ(local_.total_refs(), 0);
}

TEST_F(EarlyCreateTest, AFailedCallAbortsEveryEarlyObject) {
  const std::vector<ObjectDescription> expected = PutObjects("call fails", 4);
  channel_->fail_calls = true;
  const peer::BatchTransferResult result = Transfer(expected);
  for (int i = 0; i < 4; ++i) {
    EXPECT_THAT(result.statuses[i], HasErrorCode(ErrorCode::kUnavailable)) << i;
    EXPECT_FALSE(*local_.Contains(ids_[i])) << i;
  }
  EXPECT_EQ(local_.aborts(), 4);
  EXPECT_EQ(local_.unsealed(), 0);
  EXPECT_EQ(local_.total_refs(), 0);
}

TEST_F(EarlyCreateTest, PinnedObjectsAreReadIntoTheirEarlyObjects) {
  const std::vector<ObjectDescription> expected = PutObjects("early pinned", 3);
  bool asked = false;
  bool created_before_answer = false;
  channel_->before_call = [&] {
    if (asked) return;  // the FetchBatch, not the UnpinBatch
    asked = true;
    created_before_answer = ::rplasma::testing::WaitFor([&] { return local_.unsealed() == 3; }, absl::Seconds(5));
  };
  const peer::BatchTransferResult result =
      peer::TransferBatch(*channel_, local_, ids_, 0, clock_.Now() + absl::Seconds(5), options_, clock_, expected);
  for (int i = 0; i < 3; ++i) {
    EXPECT_OK(result.statuses[i]) << i;
    EXPECT_EQ(local_.Bytes(ids_[i]), testing::TestBytes(i, kSize)) << i;
  }
  EXPECT_TRUE(created_before_answer);
  EXPECT_EQ(result.pinned_objects, 3u);
  EXPECT_EQ(local_.aborts(), 0);
  EXPECT_EQ(owner_.total_refs(), 0) << "every lease ended";
  EXPECT_EQ(local_.unsealed(), 0);
}

TEST_F(EarlyCreateTest, AnExpectationOfTheWrongLengthIsRefused) {
  const std::vector<ObjectDescription> expected = PutObjects("length", 2);
  const peer::BatchTransferResult result = Transfer(absl::MakeConstSpan(expected).first(1));
  EXPECT_THAT(result.statuses[0], HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_EQ(channel_->calls.load(), 0);
}

}  // namespace
}  // namespace rplasma::fetch
