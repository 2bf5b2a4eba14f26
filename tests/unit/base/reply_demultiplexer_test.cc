// ReplyDemultiplexer over a socketpair carrying fixed 16-byte replies {request id, value}: replies
// out of order, a broken connection, deadlines under both policies, a claimed waiter surviving a
// break, and leadership passing between many threads.
#include "protocol/base/reply_demultiplexer.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/base/mutex_lock.h"
#include "protocol/base/notification.h"
#include "protocol/base/status.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::IsOk;
using ::testing::HasSubstr;

struct ValueWaiter : ReplyWaiter {
  uint64_t value = 0;
};

// Both ends of a connection: the demultiplexer's side reads replies and writes request ids; the
// peer side (the test, or a responder thread) reads request ids and writes replies.
class Wire {
 public:
  Wire() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    local_ = fds[0];
    peer_ = fds[1];
  }
  ~Wire() {
    ::close(local_);
    ::close(peer_);
  }

  ReplyDemultiplexer::Hooks Hooks(ReplyDemultiplexer::OnDeadline on_deadline) {
    return ReplyDemultiplexer::Hooks{
        .on_break =
            [this](const absl::Status& cause) {
              breaks.fetch_add(1);
              ::shutdown(local_, SHUT_RDWR);  // wakes a leader blocked in poll/read
              return MakeError(ErrorCode::kUnavailable, absl::StrCat("test connection failed: ", cause.message()));
            },
        .expired =
            [](uint64_t id) {
              return MakeError(ErrorCode::kDeadlineExceeded, absl::StrCat("request ", id, ": deadline exceeded"));
            },
        .on_deadline = on_deadline,
    };
  }

  void Reply(uint64_t id, uint64_t value) { WriteAll(peer_, std::vector<uint64_t>{id, value}); }
  void Request(uint64_t id) { WriteAll(local_, std::vector<uint64_t>{id}); }
  void ClosePeer() { ::shutdown(peer_, SHUT_RDWR); }
  int peer() const { return peer_; }

  // The caller-supplied reader: one reply, delivered whole. Times out only at a reply boundary.
  absl::Status ReadOne(ReplyDemultiplexer& demux, absl::Time deadline) {
    pollfd pfd{local_, POLLIN, 0};
    const absl::Duration left = deadline - absl::Now();
    const int timeout_ms = deadline == absl::InfiniteFuture()
                               ? -1
                               : static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(left)));
    int rc;
    do {
      rc = ::poll(&pfd, 1, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) return MakeError(ErrorCode::kDeadlineExceeded, "poll: no reply by the deadline");
    uint64_t frame[2];
    if (!ReadAll(local_, frame, sizeof(frame))) return MakeError(ErrorCode::kUnavailable, "read: connection closed");
    return demux.Deliver(frame[0], [&](ReplyWaiter* waiter) {
      if (waiter != nullptr) static_cast<ValueWaiter*>(waiter)->value = frame[1];
      return absl::OkStatus();
    });
  }

  static bool ReadAll(int fd, void* dst, size_t size) {
    auto* p = static_cast<char*>(dst);
    while (size > 0) {
      ssize_t n = ::read(fd, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  std::atomic<int> breaks{0};

 private:
  static void WriteAll(int fd, const std::vector<uint64_t>& words) {
    const char* p = reinterpret_cast<const char*>(words.data());
    size_t size = words.size() * sizeof(uint64_t);
    while (size > 0) {
      ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      ASSERT_GT(n, 0) << "send: " << errno;
      p += n;
      size -= static_cast<size_t>(n);
    }
  }

  int local_ = -1;
  int peer_ = -1;
};

using OnDeadline = ReplyDemultiplexer::OnDeadline;

TEST(ReplyDemultiplexerTest, RepliesOutOfOrderReachTheirWaitersOnOneThread) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  auto read_one = [&](absl::Time d) { return wire.ReadOne(demux, d); };
  ValueWaiter w[3];
  for (uint64_t i = 0; i < 3; ++i) ASSERT_THAT(demux.Register(i + 1, &w[i]), IsOk());
  wire.Reply(3, 30);
  wire.Reply(1, 10);
  wire.Reply(2, 20);
  // Waiting for 1 leads through 3's reply first; 3's waiter then finds its reply already in.
  ASSERT_THAT(demux.Wait(&w[0], absl::InfiniteFuture(), read_one), IsOk());
  EXPECT_EQ(w[0].value, 10u);
  ASSERT_THAT(demux.Wait(&w[2], absl::InfiniteFuture(), read_one), IsOk());
  EXPECT_EQ(w[2].value, 30u);
  ASSERT_THAT(demux.Wait(&w[1], absl::InfiniteFuture(), read_one), IsOk());
  EXPECT_EQ(w[1].value, 20u);
  EXPECT_THAT(demux.health(), IsOk());
}

TEST(ReplyDemultiplexerTest, RepliesInReverseOrderReachTheirWaitersAcrossThreads) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  constexpr int kThreads = 4;
  ValueWaiter w[kThreads];
  absl::Status result[kThreads];
  for (int i = 0; i < kThreads; ++i) ASSERT_THAT(demux.Register(i + 1, &w[i]), IsOk());
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      result[i] = demux.Wait(&w[i], absl::InfiniteFuture(), [&](absl::Time d) { return wire.ReadOne(demux, d); });
    });
  }
  for (int i = kThreads; i >= 1; --i) wire.Reply(i, 100 + i);
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_THAT(result[i], IsOk()) << i;
    EXPECT_EQ(w[i].value, 101u + i) << i;
  }
}

TEST(ReplyDemultiplexerTest, BrokenConnectionFailsEveryWaiterOnceAndLaterRegistrations) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  constexpr int kThreads = 4;
  ValueWaiter w[kThreads];
  absl::Status result[kThreads];
  for (int i = 0; i < kThreads; ++i) ASSERT_THAT(demux.Register(i + 1, &w[i]), IsOk());
  ASSERT_THAT(demux.RegisterDetached(99), IsOk());
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      result[i] = demux.Wait(&w[i], absl::InfiniteFuture(), [&](absl::Time d) { return wire.ReadOne(demux, d); });
    });
  }
  wire.Reply(2, 22);  // one reply gets through before the peer goes away
  wire.ClosePeer();
  for (auto& t : threads) t.join();
  EXPECT_THAT(result[1], IsOk());
  EXPECT_EQ(w[1].value, 22u);
  for (int i : {0, 2, 3}) {
    EXPECT_THAT(result[i], HasErrorCode(ErrorCode::kUnavailable)) << i;
    EXPECT_THAT(std::string(result[i].message()), HasSubstr("test connection failed: read: connection closed")) << i;
  }
  EXPECT_EQ(wire.breaks.load(), 1);
  EXPECT_THAT(demux.health(), HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(demux.DetachedOutstanding(), HasErrorCode(ErrorCode::kUnavailable));
  ValueWaiter late;
  EXPECT_THAT(demux.Register(7, &late), HasErrorCode(ErrorCode::kUnavailable)) << "the break is for good";
}

TEST(ReplyDemultiplexerTest, ExpiredWaiterIsAbandonedWhileOthersGetTheirReplies) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kAbandonWaiter));
  auto read_one = [&](absl::Time d) { return wire.ReadOne(demux, d); };
  ValueWaiter hasty, patient;
  ASSERT_THAT(demux.Register(1, &hasty), IsOk());
  ASSERT_THAT(demux.Register(2, &patient), IsOk());
  absl::Status hasty_result, patient_result;
  std::thread patient_thread([&] { patient_result = demux.Wait(&patient, absl::InfiniteFuture(), read_one); });
  hasty_result = demux.Wait(&hasty, absl::Now() + absl::Milliseconds(50), read_one);
  EXPECT_THAT(hasty_result, HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_THAT(std::string(hasty_result.message()), HasSubstr("request 1: deadline exceeded"));
  // The late reply is read and dropped; the patient waiter still gets its own.
  wire.Reply(1, 11);
  wire.Reply(2, 22);
  patient_thread.join();
  EXPECT_THAT(patient_result, IsOk());
  EXPECT_EQ(patient.value, 22u);
  EXPECT_EQ(hasty.value, 0u) << "an abandoned waiter is never written";
  ASSERT_OK_AND_ASSIGN(size_t detached, demux.DetachedOutstanding());
  EXPECT_EQ(detached, 0u) << "the late reply was accounted for";
  EXPECT_THAT(demux.health(), IsOk());
  EXPECT_EQ(wire.breaks.load(), 0);
}

TEST(ReplyDemultiplexerTest, ExpiredWaiterBreaksTheConnectionWhenTheReplyCannotBeSkipped) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  auto read_one = [&](absl::Time d) { return wire.ReadOne(demux, d); };
  ValueWaiter hasty, patient;
  ASSERT_THAT(demux.Register(1, &hasty), IsOk());
  ASSERT_THAT(demux.Register(2, &patient), IsOk());
  absl::Status patient_result;
  std::thread patient_thread([&] { patient_result = demux.Wait(&patient, absl::InfiniteFuture(), read_one); });
  EXPECT_THAT(demux.Wait(&hasty, absl::Now() + absl::Milliseconds(50), read_one),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  patient_thread.join();
  EXPECT_THAT(patient_result, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(demux.health(), HasErrorCode(ErrorCode::kDeadlineExceeded)) << "the cause is the expiry";
  EXPECT_EQ(wire.breaks.load(), 1);
}

TEST(ReplyDemultiplexerTest, ClaimedWaiterIsFinishedByItsLeaderDespiteABreak) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  ValueWaiter leader_waiter, claimed_waiter;
  ASSERT_THAT(demux.Register(1, &leader_waiter), IsOk());
  ASSERT_THAT(demux.Register(2, &claimed_waiter), IsOk());
  Notification claimed, broken;
  // The leader claims 2's reply, receives it "slowly" without the lock, and finishes it after a
  // break has failed everyone else.
  auto read_one = [&](absl::Time) -> absl::Status {
    absl::StatusOr<ReplyWaiter*> w = demux.Claim(2, [](const ReplyWaiter&) { return absl::OkStatus(); });
    if (!w.ok()) return w.status();
    claimed.Notify();
    broken.WaitForNotification();
    static_cast<ValueWaiter*>(*w)->value = 22;
    demux.Finish(*w, absl::OkStatus());
    return MakeError(ErrorCode::kUnavailable, "read: socket shut down");
  };
  absl::Status claimed_result;
  std::thread claimed_thread([&] {
    claimed.WaitForNotification();
    // Its deadline passes while it is being received: it still may not leave before its leader.
    claimed_result = demux.Wait(&claimed_waiter, absl::Now() + absl::Milliseconds(1), read_one);
  });
  std::thread breaker([&] {
    claimed.WaitForNotification();
    demux.Break(MakeError(ErrorCode::kUnavailable, "closed by the test"));
    broken.Notify();
  });
  EXPECT_THAT(demux.Wait(&leader_waiter, absl::InfiniteFuture(), read_one), HasErrorCode(ErrorCode::kUnavailable));
  breaker.join();
  claimed_thread.join();
  EXPECT_THAT(claimed_result, IsOk()) << "its reply came intact";
  EXPECT_EQ(claimed_waiter.value, 22u);
}

TEST(ReplyDemultiplexerTest, UnknownReplyIdBreaksTheConnectionAsProtocolError) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  ValueWaiter w;
  ASSERT_THAT(demux.Register(1, &w), IsOk());
  wire.Reply(5, 50);
  absl::Status s = demux.Wait(&w, absl::InfiniteFuture(), [&](absl::Time d) { return wire.ReadOne(demux, d); });
  EXPECT_THAT(s, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_THAT(std::string(s.message()), HasSubstr("reply for unknown request id 5"));
  EXPECT_THAT(demux.health(), HasErrorCode(ErrorCode::kProtocolError));
}

// Many threads, each sending requests one at a time; a responder answers whatever has arrived in
// reverse order. Every reply reaches its caller, and at no moment do two threads read.
TEST(ReplyDemultiplexerTest, LeadershipPassesBetweenThreadsAndOnlyOneReads) {
  Wire wire;
  ReplyDemultiplexer demux(wire.Hooks(OnDeadline::kBreakConnection));
  constexpr int kThreads = 8;
  constexpr int kRequestsPerThread = 200;
  constexpr int kTotal = kThreads * kRequestsPerThread;
  std::atomic<int> readers{0};
  std::atomic<int> max_readers{0};
  std::atomic<int> reads{0};
  auto read_one = [&](absl::Time d) {
    const int now = readers.fetch_add(1) + 1;
    int seen = max_readers.load();
    while (now > seen && !max_readers.compare_exchange_weak(seen, now)) {
    }
    absl::Status s = wire.ReadOne(demux, d);
    reads.fetch_add(1);
    readers.fetch_sub(1);
    return s;
  };
  std::thread responder([&] {
    int answered = 0;
    std::vector<uint64_t> ids(64);
    while (answered < kTotal) {
      ssize_t n = ::read(wire.peer(), ids.data(), ids.size() * sizeof(uint64_t));
      if (n < 0 && errno == EINTR) continue;
      ASSERT_GT(n, 0);
      size_t count = static_cast<size_t>(n) / sizeof(uint64_t);
      if (static_cast<size_t>(n) % sizeof(uint64_t) != 0) {  // finish the split id
        ASSERT_TRUE(Wire::ReadAll(wire.peer(), reinterpret_cast<char*>(ids.data()) + n,
                                  sizeof(uint64_t) - static_cast<size_t>(n) % sizeof(uint64_t)));
        ++count;
      }
      for (size_t i = count; i-- > 0;) wire.Reply(ids[i], ids[i] * 3);
      answered += static_cast<int>(count);
    }
  });
  std::atomic<uint64_t> next_id{1};
  std::atomic<int> correct{0};
  absl::Mutex send_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRequestsPerThread; ++r) {
        ValueWaiter w;
        const uint64_t id = next_id.fetch_add(1);
        ASSERT_THAT(demux.Register(id, &w), IsOk());
        {
          MutexLock lock(&send_mu);
          wire.Request(id);
        }
        ASSERT_THAT(demux.Wait(&w, absl::InfiniteFuture(), read_one), IsOk());
        if (w.value == id * 3) correct.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  responder.join();
  EXPECT_EQ(correct.load(), kTotal);
  EXPECT_EQ(max_readers.load(), 1);
  EXPECT_EQ(reads.load(), kTotal) << "one read per reply: nobody read without a reply to read";
  EXPECT_THAT(demux.health(), IsOk());
}

}  // namespace
}  // namespace rplasma
