#include "protocol/base/notification.h"

#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include <gtest/gtest.h>

namespace rplasma {
namespace {

// Under TSan (halt_on_error) these fail with a data race report if Notify/Wait stop ordering
// memory for the sanitizer: the notifier writes a plain string, the waiter reads it after the wait
// (issue 26; absl::Notification itself fails exactly this under Debian's uninstrumented abseil).
TEST(NotificationTest, WhatTheNotifierWroteIsSeenAfterEveryKindOfWait) {
  for (int round = 0; round < 50; ++round) {
    std::string value;
    Notification wait, timed, deadline, polled;
    std::thread notifier([&] {
      value = "written before Notify";
      wait.Notify();
      timed.Notify();
      deadline.Notify();
      polled.Notify();
    });
    wait.WaitForNotification();
    EXPECT_EQ(value, "written before Notify");
    EXPECT_TRUE(timed.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_TRUE(deadline.WaitForNotificationWithDeadline(absl::Now() + absl::Seconds(10)));
    while (!polled.HasBeenNotified()) std::this_thread::yield();
    EXPECT_EQ(value.size(), 21u);
    notifier.join();
  }
}

TEST(NotificationTest, WaitsThatTimeOutReportItAndNothingIsNotified) {
  Notification n;
  EXPECT_FALSE(n.HasBeenNotified());
  EXPECT_FALSE(n.WaitForNotificationWithTimeout(absl::Milliseconds(1)));
  EXPECT_FALSE(n.WaitForNotificationWithDeadline(absl::Now()));
  n.Notify();
  EXPECT_TRUE(n.HasBeenNotified());
  EXPECT_TRUE(n.WaitForNotificationWithTimeout(absl::ZeroDuration()));
}

}  // namespace
}  // namespace rplasma
