// PollerRole, without a device: the test plays the endpoint (polls return what it says, time is a
// variable) and checks each rule of the protocol in poller_role.h.
#include "manager/transport/verbs/poller_role.h"

#include <functional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace rplasma::transport::verbs {
namespace {

using Who = PollerRole::Who;
using WaitStep = PollerRole::WaitStep;
using SpinStep = PollerRole::SpinStep;

constexpr absl::Duration kSpin = absl::Microseconds(50);
constexpr bool kActive = false;
constexpr bool kPassive = true;
const absl::Time kNever = absl::InfiniteFuture();

// The endpoint's clock, as the role sees it: a time the test moves, and how often it was read.
struct FakeTime {
  absl::Time now = absl::UnixEpoch();
  int reads = 0;
  absl::Time operator()() {
    ++reads;
    return now;
  }
};

// What the endpoint does after a poll that found `n` completions and did not end the wait.
SpinStep Poll(PollerRole& role, int n, FakeTime& time, absl::Time deadline = kNever) {
  if (n > 0) role.CompletionsPolled(std::ref(time));
  return role.AfterPoll(n, deadline, std::ref(time));
}

// A holder whose polls keep finding nothing until the spin window is over; returns the last step.
SpinStep SpinUntilLetGo(PollerRole& role, FakeTime& time) {
  for (int polls = 0; polls < 1000; ++polls) {
    time.now += absl::Microseconds(1);
    const SpinStep step = Poll(role, 0, time);
    if (step == SpinStep::kLetGo) return step;
  }
  return SpinStep::kPause;
}

// The endpoint's letting go: arm unless armed, poll after arming (finding `found`, then nothing).
void LetGo(PollerRole& role, FakeTime& time, bool done, int found = 0) {
  if (role.MustArmToLetGo([done] { return done; })) {
    do {
      if (!role.armed()) role.Armed();
      if (found > 0) role.CompletionsPolled(std::ref(time));
    } while (role.PolledAfterArming(std::exchange(found, 0)));
  }
  role.LetGo();
}

TEST(PollerRoleTest, OnlyOneThreadHoldsTheRoleAndAWaiterTakesItWhenFree) {
  PollerRole role(kSpin, kActive);
  FakeTime time;
  EXPECT_FALSE(role.held());
  ASSERT_EQ(role.NextWaitStep(false), WaitStep::kSpin) << "the role is free: the waiter polls itself";
  role.TakeRole(Who::kWaiter, time());
  EXPECT_TRUE(role.held());
  EXPECT_EQ(role.NextWaitStep(false), WaitStep::kBlockForRole) << "a second waiter blocks";
  EXPECT_FALSE(role.CompletionThreadTakesRole()) << "the completion thread leaves it to the poller";
  role.LetGo();
  EXPECT_FALSE(role.held());
  EXPECT_EQ(role.NextWaitStep(false), WaitStep::kSpin);
  EXPECT_TRUE(role.CompletionThreadTakesRole());
}

TEST(PollerRoleTest, ASpinLetsGoOneWindowAfterTheLastCompletionReadingTheClockEveryFourEmptyPolls) {
  PollerRole role(kSpin, kPassive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  time.now += absl::Microseconds(30);
  EXPECT_EQ(Poll(role, 2, time), SpinStep::kPollAgain) << "completions: poll again at once";
  const absl::Time last_completion = time.now;
  time.now = last_completion + kSpin - absl::Microseconds(1);
  const int reads = time.reads;
  EXPECT_EQ(Poll(role, 0, time), SpinStep::kPause) << "the window restarted at the last completion";
  EXPECT_EQ(time.reads, reads + 1);
  time.now = last_completion + kSpin;  // the window is over, but the spinner has not looked yet
  for (uint32_t i = 1; i < PollerRole::kPollsPerClockRead; ++i) {
    EXPECT_EQ(Poll(role, 0, time), SpinStep::kPause) << "empty poll " << i << " reads no clock";
  }
  EXPECT_EQ(time.reads, reads + 1);
  EXPECT_EQ(Poll(role, 0, time), SpinStep::kLetGo);
  EXPECT_EQ(time.reads, reads + 2);
}

TEST(PollerRoleTest, ASpinnerYieldsTheCpuOnceEveryThirtyTwoEmptyPollsAndStopsAtItsDeadline) {
  PollerRole role(absl::Milliseconds(10), kPassive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  std::vector<int> yields;
  for (int poll = 1; poll <= 3 * static_cast<int>(PollerRole::kPollsPerYield); ++poll) {
    const SpinStep step = Poll(role, 0, time);
    ASSERT_NE(step, SpinStep::kLetGo) << "the clock did not move: the window is not over";
    if (step == SpinStep::kYield) yields.push_back(poll);
  }
  EXPECT_EQ(yields, (std::vector<int>{32, 64, 96}));
  const absl::Time deadline = time.now + absl::Microseconds(5);
  time.now = deadline;
  EXPECT_EQ(Poll(role, 3, time, deadline), SpinStep::kLetGo) << "past the deadline even with completions";
}

TEST(PollerRoleTest, AWaiterWhoseSpinRanDrySpinsAgainOnlyAfterSomethingCompleted) {
  PollerRole role(kSpin, kPassive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  ASSERT_EQ(SpinUntilLetGo(role, time), SpinStep::kLetGo);
  LetGo(role, time, /*done=*/false);
  ASSERT_TRUE(role.armed());
  EXPECT_EQ(role.NextWaitStep(/*spun=*/true), WaitStep::kBlock) << "no turns spinning on an idle CQ";
  EXPECT_EQ(role.NextWaitStep(/*spun=*/false), WaitStep::kSpin) << "a new wait may spin";
  // Another waiter polls its completion and lets go: the first may spin again.
  role.TakeRole(Who::kWaiter, time());
  role.CompletionsPolled(std::ref(time));
  LetGo(role, time, /*done=*/true);
  EXPECT_EQ(role.NextWaitStep(/*spun=*/true), WaitStep::kSpin);
  // A spin that polled something and then ran dry makes the CQ idle again.
  role.TakeRole(Who::kCompletionThread, time());
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain);
  EXPECT_EQ(SpinUntilLetGo(role, time), SpinStep::kLetGo);
  LetGo(role, time, /*done=*/false);
  EXPECT_EQ(role.NextWaitStep(/*spun=*/true), WaitStep::kBlock);
}

TEST(PollerRoleTest, ADrySpinWhosePollAfterArmingFoundSomethingDoesNotCountAsIdle) {
  PollerRole role(kSpin, kPassive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  ASSERT_EQ(SpinUntilLetGo(role, time), SpinStep::kLetGo);
  LetGo(role, time, /*done=*/false, /*found=*/1);
  EXPECT_EQ(role.NextWaitStep(/*spun=*/true), WaitStep::kSpin);
}

TEST(PollerRoleTest, AnUnarmedCqLetsAWaiterSpinAgainSoItsLettingGoArmsIt) {
  PollerRole role(kSpin, kActive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  ASSERT_EQ(SpinUntilLetGo(role, time), SpinStep::kLetGo);
  LetGo(role, time, /*done=*/false);
  ASSERT_TRUE(role.armed()) << "a waiter that did not get what it waited for arms before it blocks";
  ASSERT_EQ(role.NextWaitStep(/*spun=*/true), WaitStep::kBlock);
  role.EventConsumed();
  EXPECT_FALSE(role.armed()) << "the arm fired";
  EXPECT_EQ(role.NextWaitStep(/*spun=*/true), WaitStep::kSpin);
}

TEST(PollerRoleTest, LettingGoArmsAndPollsAgainWhilePollsFindSomething) {
  PollerRole role(kSpin, kPassive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  ASSERT_TRUE(role.MustArmToLetGo([] { return false; }));
  EXPECT_TRUE(role.PolledAfterArming(2));
  EXPECT_TRUE(role.PolledAfterArming(1));
  EXPECT_FALSE(role.PolledAfterArming(0));
  EXPECT_FALSE(role.PolledAfterArming(-1)) << "a failed poll ends it too";
}

TEST(PollerRoleTest, ThePassiveSideAlwaysArmsTheActiveSideOnlyForABlockedOrUnservedWaiter) {
  int done_calls = 0;
  auto done = [&done_calls](bool value) {
    return [&done_calls, value] {
      ++done_calls;
      return value;
    };
  };
  {
    PollerRole passive(kSpin, kPassive);
    passive.TakeRole(Who::kCompletionThread, absl::UnixEpoch());
    EXPECT_TRUE(passive.MustArmToLetGo(done(true))) << "requests arrive unasked";
  }
  PollerRole active(kSpin, kActive);
  active.TakeRole(Who::kCompletionThread, absl::UnixEpoch());
  done_calls = 0;
  EXPECT_FALSE(active.MustArmToLetGo(done(false))) << "nobody blocked: every completion has its poller";
  EXPECT_EQ(done_calls, 0) << "the completion thread's condition does not matter";
  const WaitStep blocked = active.NextWaitStep(false);
  ASSERT_EQ(blocked, WaitStep::kBlockForRole);
  active.Blocked(blocked);
  EXPECT_TRUE(active.MustArmToLetGo(done(false))) << "a blocked waiter needs the event";
  active.Unblocked(blocked);
  active.LetGo();

  active.TakeRole(Who::kWaiter, absl::UnixEpoch());
  EXPECT_FALSE(active.MustArmToLetGo(done(true))) << "the waiter got its completion";
  EXPECT_TRUE(active.MustArmToLetGo(done(false))) << "the waiter is about to block";
  active.LetGo();
}

TEST(PollerRoleTest, TheCompletionThreadLetsGoWhenItsFirstPollFindsNothing) {
  PollerRole role(kSpin, kActive);
  FakeTime time;
  role.TakeRole(Who::kCompletionThread, time());
  EXPECT_EQ(Poll(role, 0, time), SpinStep::kLetGo) << "a waiter already took what the event announced";
  role.LetGo();
  role.TakeRole(Who::kWaiter, time());
  EXPECT_EQ(Poll(role, 0, time), SpinStep::kPause) << "a waiter's first empty poll does not end its spin";
  role.LetGo();
  role.TakeRole(Who::kCompletionThread, time());
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain);
  EXPECT_EQ(Poll(role, 0, time), SpinStep::kPause) << "it found something: it spins like a waiter";
}

TEST(PollerRoleTest, TheCompletionThreadMakesWayForAWaiterThatWantsTheRole) {
  PollerRole role(kSpin, kPassive);
  FakeTime time;
  // A waiter whose spin ran dry: it blocks without wanting the role.
  role.TakeRole(Who::kWaiter, time());
  ASSERT_EQ(SpinUntilLetGo(role, time), SpinStep::kLetGo);
  LetGo(role, time, /*done=*/false);
  const WaitStep idle = role.NextWaitStep(/*spun=*/true);
  ASSERT_EQ(idle, WaitStep::kBlock);
  role.Blocked(idle);

  role.TakeRole(Who::kCompletionThread, time());
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain) << "a waiter that may not spin does not count";
  const WaitStep wants = role.NextWaitStep(/*spun=*/false);
  ASSERT_EQ(wants, WaitStep::kBlockForRole);
  role.Blocked(wants);
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kLetGo) << "the waiter saves a hand-off";
  role.Unblocked(wants);
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain);
  role.Unblocked(idle);
}

TEST(PollerRoleTest, WithCqSpinZeroNobodySpinsAndLettingGoAlwaysArms) {
  PollerRole role(absl::ZeroDuration(), kActive);
  FakeTime time;
  EXPECT_EQ(role.NextWaitStep(false), WaitStep::kBlock) << "the role is free and the CQ unarmed, still no spin";
  role.TakeRole(Who::kCompletionThread, time());
  EXPECT_EQ(Poll(role, 4, time), SpinStep::kPollAgain) << "the completion thread drains the CQ";
  EXPECT_EQ(Poll(role, 0, time), SpinStep::kLetGo) << "and stops at the first empty poll";
  EXPECT_TRUE(role.MustArmToLetGo([] { return true; })) << "active side, nobody blocked: armed anyway";
  role.LetGo();
  EXPECT_EQ(role.spin_window(), absl::ZeroDuration());
  role.TakeRole(Who::kCompletionThread, time());
  time.now += absl::Microseconds(1);
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain);
  EXPECT_EQ(role.spin_window(), absl::ZeroDuration()) << "a window of 0 never grows";
}

TEST(PollerRoleTest, TheSpinWindowGrowsWhenTheNextCompletionCameSoonAfterADrySpin) {
  PollerRole role(kSpin, kPassive);
  FakeTime time;
  role.TakeRole(Who::kWaiter, time());
  const int reads = time.reads;
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain);
  EXPECT_EQ(time.reads, reads + 1) << "no dry spin: only the spin itself reads the clock";
  ASSERT_EQ(SpinUntilLetGo(role, time), SpinStep::kLetGo);
  LetGo(role, time, /*done=*/false);
  EXPECT_EQ(role.spin_window(), kSpin);
  time.now += absl::Microseconds(100);  // within the cap (800 us): the spin gave up too early
  role.TakeRole(Who::kCompletionThread, time());
  EXPECT_EQ(Poll(role, 1, time), SpinStep::kPollAgain);
  EXPECT_EQ(role.spin_window(), 2 * kSpin);
}

}  // namespace
}  // namespace rplasma::transport::verbs
