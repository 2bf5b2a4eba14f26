// Notification: absl::Notification that ThreadSanitizer can follow (see mutex_lock.h for why:
// Debian's abseil is not built with -fsanitize=thread, so TSan cannot see the order a plain
// absl::Notification gives and reports false races on what the notifier wrote before Notify()).
//
// In TSan builds Notify() is a release on this object and every wait that saw the notification an
// acquire; elsewhere it is exactly absl::Notification. Use it instead of absl::Notification.
//
// Thread-safety: like absl::Notification (Notify at most once; waits from any thread).
#ifndef RPLASMA_PROTOCOL_BASE_NOTIFICATION_H_
#define RPLASMA_PROTOCOL_BASE_NOTIFICATION_H_

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#include "protocol/base/mutex_lock.h"

namespace rplasma {

class Notification {
 public:
  Notification() = default;
  Notification(const Notification&) = delete;
  Notification& operator=(const Notification&) = delete;

  void Notify() {
    RPLASMA_TSAN_RELEASE(this);
    notification_.Notify();
  }
  bool HasBeenNotified() const { return Acquired(notification_.HasBeenNotified()); }
  void WaitForNotification() const {
    notification_.WaitForNotification();
    Acquired(true);
  }
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const {
    return Acquired(notification_.WaitForNotificationWithTimeout(timeout));
  }
  bool WaitForNotificationWithDeadline(absl::Time deadline) const {
    return Acquired(notification_.WaitForNotificationWithDeadline(deadline));
  }

 private:
  bool Acquired(bool notified) const {
    if (notified) RPLASMA_TSAN_ACQUIRE(const_cast<Notification*>(this));
    return notified;
  }

  absl::Notification notification_;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_NOTIFICATION_H_
