// Clients that die with SIGKILL at awkward moments: the store must take back everything they
// held (references, unsealed objects, waiting gets) within a second, and their ids must be usable
// again. The dying clients are client_worker processes (tests/integration/client_worker.cc).
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "protocol/base/socket_io.h"
#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientFaultTest : public ClientStoreTest {
 protected:
  absl::StatusOr<bench::ChildProcess> StartWorker(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {RPLASMA_CLIENT_WORKER, store_->socket_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return bench::ChildProcess::Start(argv, store_->dir() + "/worker.log");
  }

  // SIGKILLs `worker`, then returns how long the store took to satisfy `recovered`.
  template <typename Pred>
  absl::Duration KillAndTimeRecovery(bench::ChildProcess& worker, Pred recovered) {
    const absl::Time start = absl::Now();
    worker.Kill();
    EXPECT_TRUE(WaitForStats(recovered, absl::Seconds(5)));
    return absl::Now() - start;
  }
};

TEST_F(ClientFaultTest, KilledClientHoldingReferencesLosesThemWithinOneSecond) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const std::vector<ObjectID> ids = Labels("held", 100);
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 4096))));
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess worker, StartWorker({"hold-socket", "100", "held"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.ref_count == 100 && s.clients == 2; }));
  // Referenced: delete is deferred, eviction impossible.
  ASSERT_OK(client_->Delete(ids));
  ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
  EXPECT_EQ(held.objects_sealed, 100u);
  const absl::Duration took = KillAndTimeRecovery(
      worker, [](const StatsReply& s) { return s.ref_count == 0 && s.clients == 1 && s.objects_sealed == 0; });
  EXPECT_LE(took, absl::Seconds(1));
  // The ids can be created again.
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i + 1000, 4096))));
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, KilledReadersHoldingAThousandSlotReferencesEachLoseThemWithinOneSecond) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  constexpr int kReaders = 4;
  constexpr int kObjects = 1000;
  const std::vector<ObjectID> ids = Labels("slot-held", kObjects);
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 1024))));
  std::vector<bench::ChildProcess> readers;
  for (int r = 0; r < kReaders; ++r) {
    ASSERT_OK_AND_ASSIGN(bench::ChildProcess reader, StartWorker({"hold", absl::StrCat(kObjects), "slot-held"}));
    readers.push_back(std::move(reader));
  }
  // Every reference went through a slot: the store counted none of them and got no Get.
  ASSERT_TRUE(WaitForStats(
      [](const StatsReply& s) { return s.slot_references == kReaders * kObjects && s.clients == kReaders + 1; }));
  ASSERT_OK_AND_ASSIGN(StatsReply held, client_->Stats());
  EXPECT_EQ(held.ref_count, held.slot_references) << "every reference counted is a slot's";
  // Held through slots: eviction passes over every object, and deletes wait for the slots.
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, client_->Evict(1ull << 30));
  EXPECT_EQ(evicted.objects_evicted, 0u);
  ASSERT_OK(client_->Delete(ids));
  ASSERT_OK_AND_ASSIGN(StatsReply deleted, client_->Stats());
  EXPECT_EQ(deleted.objects_sealed, static_cast<uint64_t>(kObjects));
  EXPECT_EQ(deleted.reclaims_waiting, static_cast<uint64_t>(kObjects));
  ASSERT_OK_AND_ASSIGN(bool visible, client_->Contains(ids[0]));
  EXPECT_FALSE(visible);
  const absl::Time start = absl::Now();
  for (bench::ChildProcess& reader : readers) reader.Kill();
  EXPECT_TRUE(WaitForStats(
      [](const StatsReply& s) {
        return s.slot_references == 0 && s.reclaims_waiting == 0 && s.objects_sealed == 0 && s.clients == 1;
      },
      absl::Seconds(5)));
  EXPECT_LE(absl::Now() - start, absl::Seconds(1));
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i + 7, 1024))));
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, KilledClientInTheMiddleOfCreatesHasItsObjectsAbortedWithinOneSecond) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess worker, StartWorker({"create", "100", "half", "65536"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.objects_created == 100; }));
  ASSERT_OK_AND_ASSIGN(StatsReply during, client_->Stats());
  EXPECT_GE(during.used_bytes, 100u * 65536);
  const std::vector<ObjectID> ids = Labels("half", 100);
  EXPECT_THAT(client_->Create(ids[0], 10), HasErrorCode(ErrorCode::kObjectExists));
  const absl::Duration took = KillAndTimeRecovery(worker, [&](const StatsReply& s) {
    return s.objects_created == 0 && s.used_bytes == baseline_.used_bytes && s.clients == 1;
  });
  EXPECT_LE(took, absl::Seconds(1));
  for (size_t i = 0; i < ids.size(); ++i)
    ASSERT_OK(client_->Put(ids[i], AsSpan(TestBytes<std::vector<uint8_t>>(i, 1024))));
  ASSERT_OK(client_->Delete(ids));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, WaiterKilledBeforeTheSealLeavesNoWaitAndNoReference) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess worker, StartWorker({"wait", "1", "late"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.waiting_gets == 1; }));
  const absl::Duration took =
      KillAndTimeRecovery(worker, [](const StatsReply& s) { return s.waiting_gets == 0 && s.clients == 1; });
  EXPECT_LE(took, absl::Seconds(1));
  const ObjectID id = ObjectID::FromLabel("late-0");
  ASSERT_OK(client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(1, 100))));
  ASSERT_OK_AND_ASSIGN(StatsReply after, client_->Stats());
  EXPECT_EQ(after.ref_count, 0u) << "the dead waiter must not have been given a reference";
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

TEST_F(ClientFaultTest, LiveWaiterInAnotherProcessIsWokenBySeal) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess worker, StartWorker({"wait", "1", "soon"}));
  ASSERT_TRUE(WaitForStats([](const StatsReply& s) { return s.waiting_gets == 1; }));
  const ObjectID id = ObjectID::FromLabel("soon-0");
  ASSERT_OK(client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(2, 100))));
  std::optional<int> status = worker.Wait(absl::Seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

// A stopped store (SIGSTOP) answers nothing: every call still ends by its deadline, and after
// SIGCONT the same client works again.
TEST_F(ClientFaultTest, CallsToAStoppedStoreEndByTheirDeadlineAndTheClientWorksAfterIt) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID id = ObjectID::FromLabel("while-stopped");
  ASSERT_EQ(::kill(store_->pid(), SIGSTOP), 0);
  absl::Time start = absl::Now();
  absl::StatusOr<ObjectBuffer> got = client_->GetOne(id, absl::Milliseconds(100));
  EXPECT_THAT(got, HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));  // 100 ms + the default 500 ms reply grace

  // A call without a timeout ends by the client's io_timeout; a new client by connect_timeout.
  ClientOptions options;
  options.store_socket = store_->socket_path();
  options.client_name = "short-deadlines";
  options.io_timeout = absl::Milliseconds(200);
  options.connect_timeout = absl::Milliseconds(200);
  start = absl::Now();
  EXPECT_THAT(Client::Connect(options), HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));

  ASSERT_EQ(::kill(store_->pid(), SIGCONT), 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> other, Client::Connect(options));
  ASSERT_EQ(::kill(store_->pid(), SIGSTOP), 0);
  start = absl::Now();
  EXPECT_THAT(other->Stats(), HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  ASSERT_EQ(::kill(store_->pid(), SIGCONT), 0);

  // The late replies are dropped; both connections still work.
  ASSERT_OK(client_->Put(id, AsSpan(TestBytes<std::vector<uint8_t>>(5, 1000))));
  ASSERT_OK_AND_ASSIGN(ObjectBuffer buffer, other->GetOne(id, absl::Milliseconds(100)));
  EXPECT_EQ(buffer.data().size(), 1000u);
  buffer = ObjectBuffer();
  ASSERT_OK(other->Stats());
  other.reset();
  ASSERT_OK(client_->Delete({id}));
  ExpectBackAtBaseline();
}

// A listener that never accepts, its backlog full: connect(2) would wait forever; Connect ends by
// connect_timeout.
TEST_F(ClientFaultTest, ConnectToAListenerWithAFullBacklogEndsByItsDeadline) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  const std::string path = dir.Join("full.sock");
  ASSERT_OK_AND_ASSIGN(UniqueFd listener, UnixListen(path));
  ASSERT_EQ(::listen(listener.get(), 0), 0);  // the smallest backlog
  // Fill it: connections the listener never accepts, each made non-blocking until one is refused.
  std::vector<UniqueFd> fillers;
  for (int i = 0; i < 64; ++i) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(fd.valid());
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ASSERT_EQ(errno, EAGAIN) << std::strerror(errno);
      break;
    }
    fillers.push_back(std::move(fd));
  }
  ASSERT_LT(fillers.size(), 64u) << "the backlog never filled";
  ClientOptions options;
  options.store_socket = path;
  options.connect_timeout = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  EXPECT_THAT(Client::Connect(options), HasErrorCode(ErrorCode::kDeadlineExceeded));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(250));
  EXPECT_LT(took, absl::Seconds(2));
}

}  // namespace
}  // namespace rplasma::testing
