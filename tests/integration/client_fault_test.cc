// Clients that die with SIGKILL at awkward moments: the store must take back everything they
// held (references, unsealed objects, waiting gets) within a second, and their ids must be usable
// again. The dying clients are client_worker processes (tests/integration/client_worker.cc).
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientFaultTest : public ClientStoreTest {
 protected:
  absl::StatusOr<Subprocess> StartWorker(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {RPLASMA_CLIENT_WORKER, store_->socket_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Subprocess::Start(argv, store_->dir() + "/worker.log");
  }

  // SIGKILLs `worker`, then returns how long the store took to satisfy `recovered`.
  template <typename Pred>
  absl::Duration KillAndTimeRecovery(Subprocess& worker, Pred recovered) {
    const absl::Time start = absl::Now();
    worker.Kill();
    EXPECT_TRUE(WaitForStats(recovered, absl::Seconds(5)));
    return absl::Now() - start;
  }
};

TEST_F(ClientFaultTest, KilledClientHoldingReferencesLosesThemWithinOneSecond) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<ObjectID> ids = Labels("held", 100);
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_OK(client_->Put(ids[i], AsSpan(Pattern(4096, i))));
  ASSERT_OK_AND_ASSIGN(Subprocess worker, StartWorker({"hold", "100", "held"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.ref_count == 100 && s.clients == 2; }));
  // Referenced: delete is deferred, eviction impossible.
  ASSERT_OK(client_->Delete(ids));
  ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
  EXPECT_EQ(held.objects_sealed, 100u);
  const absl::Duration took = KillAndTimeRecovery(
      worker, [](const StatsReply& s) { return s.ref_count == 0 && s.clients == 1 && s.objects_sealed == 0; });
  EXPECT_LE(took, absl::Seconds(1));
  // The ids can be created again.
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_OK(client_->Put(ids[i], AsSpan(Pattern(4096, i + 1000))));
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, KilledClientInTheMiddleOfCreatesHasItsObjectsAbortedWithinOneSecond) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(Subprocess worker, StartWorker({"create", "100", "half", "65536"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.objects_created == 100; }));
  ASSERT_OK_AND_ASSIGN(StatsReply during, client_->Stats());
  EXPECT_GE(during.used_bytes, 100u * 65536);
  const std::vector<ObjectID> ids = Labels("half", 100);
  EXPECT_THAT(client_->Create(ids[0], 10), HasErrorCode(ErrorCode::kObjectExists));
  const absl::Duration took = KillAndTimeRecovery(worker, [&](const StatsReply& s) {
    return s.objects_created == 0 && s.used_bytes == baseline_.used_bytes && s.clients == 1;
  });
  EXPECT_LE(took, absl::Seconds(1));
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_OK(client_->Put(ids[i], AsSpan(Pattern(1024, i))));
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, WaiterKilledBeforeTheSealLeavesNoWaitAndNoReference) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(Subprocess worker, StartWorker({"wait", "1", "late"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.waiting_gets == 1; }));
  const absl::Duration took =
      KillAndTimeRecovery(worker, [](const StatsReply& s) { return s.waiting_gets == 0 && s.clients == 1; });
  EXPECT_LE(took, absl::Seconds(1));
  const ObjectID id = ObjectID::FromLabel("late-0");
  ASSERT_OK(client_->Put(id, AsSpan(Pattern(100, 1))));
  ASSERT_OK_AND_ASSIGN(StatsReply after, client_->Stats());
  EXPECT_EQ(after.ref_count, 0u) << "the dead waiter must not have been given a reference";
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, LiveWaiterInAnotherProcessIsWokenBySeal) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(Subprocess worker, StartWorker({"wait", "1", "soon"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.waiting_gets == 1; }));
  const ObjectID id = ObjectID::FromLabel("soon-0");
  ASSERT_OK(client_->Put(id, AsSpan(Pattern(100, 2))));
  std::optional<int> status = worker.Wait(absl::Seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

}  // namespace
}  // namespace rplasma::testing
