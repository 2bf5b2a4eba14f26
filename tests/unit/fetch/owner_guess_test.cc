// Guessing the owner of objects never fetched before (owner_guess.h): the rules of the guess, and
// the fetch engine using it — a cold fetch from the usual producer asks no directory, and a wrong
// or dead guess costs one attempt, never the fetch or its bytes. Node "a" fetches; "b" (the
// fixture's owner) and "c" (OtherNode) hold objects.
#include "manager/fetch/owner_guess.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/unit/fetch/fetch_engine_fixture.h"

namespace rplasma::fetch {
namespace {

TEST(OwnerGuessTest, TwoAgreeingLookupsMakeAGuessThatLastsWhileTheNodeProvesAlive) {
  FakeClock clock;
  OwnerGuess guess(/*enabled=*/true, absl::Seconds(5), &clock);
  EXPECT_EQ(guess.Guess(), "");
  guess.Learn("b");
  EXPECT_EQ(guess.Guess(), "") << "one lookup is not a pattern";
  guess.Learn("b");
  EXPECT_EQ(guess.Guess(), "b");
  clock.Advance(absl::Seconds(4));
  guess.Judge("b", 10, 10);  // served: alive now
  clock.Advance(absl::Seconds(4));
  EXPECT_EQ(guess.Guess(), "b");
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(guess.Guess(), "") << "silent for longer than the node ttl";
  guess.Learn("b");
  EXPECT_EQ(guess.Guess(), "b") << "a lookup listing it proves it alive again";
}

TEST(OwnerGuessTest, MissesStopTheGuessAndAnotherNodeTakesOverOnlyOnceLookupsAgreeOnIt) {
  FakeClock clock;
  OwnerGuess guess(/*enabled=*/true, absl::Seconds(5), &clock);
  for (int i = 0; i < 6; ++i) guess.Learn("b");  // confidence capped at kMaxConfidence
  guess.Judge("b", 4, 1);                        // mostly missed: 4 -> 2
  EXPECT_EQ(guess.Guess(), "b") << "one miss after a long run of hits keeps guessing";
  guess.Judge("c", 4, 0);  // not the candidate: ignored
  EXPECT_EQ(guess.Guess(), "b");
  guess.Judge("b", 4, 2);  // half served counts as a hit: 2 -> 3
  guess.Judge("b", 1, 0);  // 3 -> 1
  EXPECT_EQ(guess.Guess(), "");
  guess.Learn("c");  // confidence 1: c takes over, at 1
  EXPECT_EQ(guess.Guess(), "");
  guess.Learn("c");
  EXPECT_EQ(guess.Guess(), "c");
  guess.Learn("b");  // 2 -> 1, c stays the candidate
  EXPECT_EQ(guess.Guess(), "");
  guess.Learn("c");
  EXPECT_EQ(guess.Guess(), "c");
  guess.Forget("c");
  EXPECT_EQ(guess.Guess(), "") << "unreachable: no guess until lookups name it again";
}

TEST(OwnerGuessTest, LookupsThatNameANewNodeEachTimeNeverGuess) {
  FakeClock clock;
  OwnerGuess guess(/*enabled=*/true, absl::Seconds(5), &clock);
  for (int i = 0; i < 20; ++i) {
    guess.Learn(absl::StrCat("node", i % 3));
    EXPECT_EQ(guess.Guess(), "") << i;
  }
}

TEST(OwnerGuessTest, DisabledNeverGuesses) {
  FakeClock clock;
  OwnerGuess guess(/*enabled=*/false, absl::Seconds(5), &clock);
  for (int i = 0; i < 4; ++i) guess.Learn("b");
  EXPECT_EQ(guess.Guess(), "");
}

class FetchGuessTest : public FetchEngineTest {
 protected:
  // Fetches one new object of `owner`'s (published in the directory) and checks its bytes.
  void FetchNew(const std::string& owner, FakeLocalStore& store, int n, size_t size = 300) {
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("guess ", owner, n));
    const std::string bytes = testing::TestBytes(n, size + n);
    FakeLocalStore::Entry e = store.Put(id, bytes);
    ASSERT_OK(directory_.PublishObject(id, ObjectLocation{owner, e.description()}));
    ASSERT_OK(engine_->Fetch({id}, absl::Seconds(5))[0]) << owner << n;
    EXPECT_EQ(local_.Bytes(id), bytes);
  }
  static ThresholdPolicyOptions Policy() {
    ThresholdPolicyOptions options;
    options.setting.table.default_bytes = 4096;
    return options;
  }
};

TEST_F(FetchGuessTest, AColdFetchFromTheUsualOwnerAsksNoDirectoryAndNeedNotWaitForPublication) {
  FetchNew("b", owner_, 0);
  FetchNew("b", owner_, 1);
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(stats_.guessed_fetches.load(), 0u);
  FetchNew("b", owner_, 2);
  EXPECT_EQ(directory_.lookups(), 2) << "guessed: no directory call";
  // A batch, some of it not in the directory yet: the guess serves it as a hint would.
  std::vector<ObjectID> ids;
  for (int i = 0; i < 10; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("unpublished ", i)));
    owner_.Put(ids.back(), testing::TestBytes(i, 2000));
  }
  for (const absl::Status& s : engine_->Fetch(ids, absl::Seconds(5))) EXPECT_OK(s);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(local_.Bytes(ids[i]), testing::TestBytes(i, 2000));
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(stats_.guessed_fetches.load(), 11u);
  // Sizes the guess cannot know: a single object far above the threshold and a mixed batch.
  FetchNew("b", owner_, 3, 3 << 20);
  std::vector<ObjectID> mixed;
  for (int i = 0; i < 4; ++i) {
    mixed.push_back(ObjectID::FromLabel(absl::StrCat("guessed mixed ", i)));
    owner_.Put(mixed.back(), testing::TestBytes(i, i % 2 == 0 ? 500 : 300000));
  }
  for (const absl::Status& s : engine_->Fetch(mixed, absl::Seconds(5))) EXPECT_OK(s);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(local_.Bytes(mixed[i]), testing::TestBytes(i, i % 2 == 0 ? 500 : 300000));
  EXPECT_EQ(directory_.lookups(), 2);
  EXPECT_EQ(stats_.guessed_fetches.load(), 16u);
  EXPECT_EQ(stats_.guess_misses.load(), 0u);
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(FetchGuessTest, AWrongGuessCostsOneAttemptThenTheNewOwnerIsLearned) {
  OtherNode c(connector_, "c");
  FetchNew("b", owner_, 0);
  FetchNew("b", owner_, 1);
  FetchNew("c", c.store, 2);  // guessed b: a miss, then the directory
  EXPECT_EQ(stats_.guessed_fetches.load(), 1u);
  EXPECT_EQ(stats_.guess_misses.load(), 1u);
  EXPECT_EQ(directory_.lookups(), 3);
  EXPECT_EQ(clock_.sleeps(), 0) << "the miss goes to the directory at once";
  FetchNew("c", c.store, 3);
  FetchNew("c", c.store, 4);
  EXPECT_EQ(stats_.guessed_fetches.load(), 1u) << "no guess until two lookups agree on c";
  EXPECT_EQ(directory_.lookups(), 5);
  FetchNew("c", c.store, 5);
  EXPECT_EQ(stats_.guessed_fetches.load(), 2u);
  EXPECT_EQ(stats_.guess_misses.load(), 1u);
  EXPECT_EQ(directory_.lookups(), 5);
  EXPECT_EQ(local_.unsealed(), 0) << "nothing partial left here";
}

TEST_F(FetchGuessTest, AGuessedOwnerThatCannotBeReachedCostsOneAttempt) {
  OtherNode c(connector_, "c");
  FetchNew("b", owner_, 0);
  FetchNew("b", owner_, 1);
  connector_.Add("b", nullptr);  // b is gone
  FetchNew("c", c.store, 2);
  EXPECT_EQ(stats_.guess_misses.load(), 1u);
  FetchNew("c", c.store, 3);
  EXPECT_EQ(stats_.guessed_fetches.load(), 1u) << "b is not guessed again";
  EXPECT_EQ(clock_.sleeps(), 0);
}

TEST_F(FetchGuessTest, NoGuessWhenTurnedOffOrWhenTheOwnerWasSilentForLongerThanTheNodeTtl) {
  FetchNew("b", owner_, 0);
  FetchNew("b", owner_, 1);
  clock_.Advance(absl::Seconds(6));  // the location cache's node_ttl is 5 s
  FetchNew("b", owner_, 2);
  EXPECT_EQ(stats_.guessed_fetches.load(), 0u);
  EXPECT_EQ(directory_.lookups(), 3);
  UsePolicy(Policy(), /*guess_owner=*/false);
  for (int i = 3; i < 6; ++i) FetchNew("b", owner_, i);
  EXPECT_EQ(stats_.guessed_fetches.load(), 0u);
  EXPECT_EQ(directory_.lookups(), 6);
}

}  // namespace
}  // namespace rplasma::fetch
