// The client library against a scripted fake store in the same process (a Unix socket and a
// memfd): out-of-order replies reach their callers, and a store that lies or sends garbage yields
// ProtocolError / Unavailable, never a crash.
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "client/client.h"
#include "protocol/base/socket_io.h"
#include "protocol/frame.h"
#include "protocol/store_messages.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

// One scripted store connection. The test calls its methods from a thread of its own.
class FakeStore {
 public:
  FakeStore(uint64_t real_size, uint64_t claimed_size) : claimed_size_(claimed_size) {
    auto listener = UnixListen(dir_.Join("store.sock"));
    EXPECT_OK(listener);
    listen_fd_ = std::move(listener).value();
    arena_fd_.reset(::memfd_create("fake-arena", MFD_CLOEXEC));
    EXPECT_EQ(::ftruncate(arena_fd_.get(), static_cast<off_t>(real_size)), 0);
  }

  std::string path() const { return dir_.Join("store.sock"); }

  // Accepts the client and answers its ConnectRequest with the arena fd.
  void AcceptAndHandshake() {
    fd_.reset(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
    ASSERT_OK_AND_ASSIGN(Request connect, ReadRequest());
    ASSERT_TRUE(std::holds_alternative<ConnectRequest>(connect.body));
    Reply reply;
    reply.request_id = connect.request_id;
    reply.body = ConnectReply{claimed_size_, "fake", kMaxIdsPerRequest};
    ASSERT_OK(SendWithFd(fd_.get(), EncodeFrame(EncodeReply(reply)), arena_fd_.get()));
  }

  absl::StatusOr<Request> ReadRequest() {
    ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd_.get(), kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(10)));
    return DecodeRequest(payload);
  }
  void Send(const Reply& reply) { ASSERT_OK(WriteFrame(fd_.get(), EncodeReply(reply))); }
  void SendRaw(const std::string& bytes) { ASSERT_OK(WriteAll(fd_.get(), bytes.data(), bytes.size())); }
  void Close() { fd_.reset(); }

 private:
  bench::ScratchDir dir_ = bench::ScratchDir::CreateOrDie();
  uint64_t claimed_size_;
  UniqueFd listen_fd_;
  UniqueFd arena_fd_;
  UniqueFd fd_;
};

std::unique_ptr<Client> ConnectTo(FakeStore& store) {
  std::thread server([&] { store.AcceptAndHandshake(); });
  ClientOptions options;
  options.store_socket = store.path();
  auto client = Client::Connect(options);
  server.join();
  EXPECT_OK(client);
  return client.ok() ? std::move(client).value() : nullptr;
}

ObjectInfo SealedAt(const ObjectID& id, uint64_t offset, uint64_t size) {
  ObjectInfo info;
  info.id = id;
  info.state = ObjectState::kSealed;
  info.offset = offset;
  info.data_size = size;
  return info;
}

TEST(ClientConnectionTest, RepliesAnsweredOutOfOrderReachTheirOwnCallers) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  const ObjectID id = ObjectID::FromLabel("late");
  std::atomic<bool> get_done{false};
  absl::StatusOr<ObjectBuffer> got = absl::UnknownError("not yet");
  std::thread getter([&] {
    got = client->GetOne(id, absl::InfiniteDuration());
    get_done = true;
  });
  ASSERT_OK_AND_ASSIGN(Request get, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<GetRequest>(get.body));

  // While the Get waits, a Stats call from another thread is answered first.
  absl::StatusOr<StatsReply> stats = absl::UnknownError("not yet");
  std::thread stater([&] { stats = client->Stats(); });
  ASSERT_OK_AND_ASSIGN(Request stats_request, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<StatsRequest>(stats_request.body));
  Reply stats_reply;
  stats_reply.request_id = stats_request.request_id;
  stats_reply.body = StatsReply{.capacity = 12345};
  store.Send(stats_reply);
  stater.join();
  ASSERT_OK(stats);
  EXPECT_EQ(stats->capacity, 12345u);
  EXPECT_FALSE(get_done.load());

  Reply get_reply;
  get_reply.request_id = get.request_id;
  get_reply.body = ObjectsReply{{SealedAt(id, 4096, 100)}, false};
  store.Send(get_reply);
  getter.join();
  ASSERT_OK(got);
  EXPECT_EQ(got->data().data(), client->arena_base() + 4096);
  EXPECT_EQ(got->data().size(), 100u);
  // Dropping the buffer sends a release for it.
  got = absl::UnknownError("dropped");
  ASSERT_OK_AND_ASSIGN(Request release, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<ReleaseRequest>(release.body));
  EXPECT_EQ(std::get<ReleaseRequest>(release.body).ids, std::vector<ObjectID>{id});
}

TEST(ClientConnectionTest, AStoreClaimingALargerArenaThanItsFdIsRefused) {
  FakeStore store(1 << 20, 1 << 30);
  std::thread server([&] { store.AcceptAndHandshake(); });
  ClientOptions options;
  options.store_socket = store.path();
  EXPECT_THAT(Client::Connect(options), HasErrorCode(ErrorCode::kProtocolError));
  server.join();
}

TEST(ClientConnectionTest, AnObjectOutsideTheArenaIsAProtocolErrorAndItsReferenceIsReturned) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  const ObjectID id = ObjectID::FromLabel("outside");
  absl::StatusOr<ObjectBuffer> got = absl::UnknownError("not yet");
  std::thread getter([&] { got = client->GetOne(id); });
  ASSERT_OK_AND_ASSIGN(Request get, store.ReadRequest());
  Reply reply;
  reply.request_id = get.request_id;
  reply.body = ObjectsReply{{SealedAt(id, (1 << 20) - 10, 100)}, false};
  store.Send(reply);
  getter.join();
  EXPECT_THAT(got, HasErrorCode(ErrorCode::kProtocolError));
  ASSERT_OK_AND_ASSIGN(Request release, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<ReleaseRequest>(release.body));
}

ObjectInfo CreatedAt(const ObjectID& id, uint64_t offset, uint64_t size) {
  ObjectInfo info;
  info.id = id;
  info.offset = offset;
  info.data_size = size;
  return info;
}

TEST(ClientConnectionTest, ACreateManyEntryOutsideTheArenaFailsAloneAndIsAborted) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  const ObjectID inside = ObjectID::FromLabel("inside"), outside = ObjectID::FromLabel("outside");
  absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> created = absl::UnknownError("not yet");
  const std::vector<CreateSpec> specs = {{inside, 100, 0}, {outside, 100, 0}};
  std::thread creator([&] { created = client->CreateMany(specs); });
  ASSERT_OK_AND_ASSIGN(Request request, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<CreateBatchRequest>(request.body));
  Reply reply;
  reply.request_id = request.request_id;
  reply.body = ObjectsReply{{CreatedAt(inside, 64, 100), CreatedAt(outside, (1 << 20) - 10, 100)}, false};
  store.Send(reply);
  creator.join();
  ASSERT_OK(created);
  ASSERT_EQ(created->size(), 2u);
  ASSERT_OK((*created)[0]);
  EXPECT_EQ((*created)[0]->base(), client->arena_base() + 64);
  EXPECT_THAT((*created)[1], HasErrorCode(ErrorCode::kProtocolError));
  ASSERT_OK_AND_ASSIGN(Request abort, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<AbortRequest>(abort.body));
  EXPECT_EQ(std::get<AbortRequest>(abort.body).id, outside);
}

TEST(ClientConnectionTest, ACreateManyReplyNotOnePerObjectIsAProtocolErrorAndItsObjectsAreAborted) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  const ObjectID a = ObjectID::FromLabel("a"), b = ObjectID::FromLabel("b");
  absl::StatusOr<std::vector<absl::StatusOr<CreatedObject>>> created = absl::UnknownError("not yet");
  std::thread creator([&] { created = client->CreateMany(std::vector<CreateSpec>{{a, 100, 0}, {b, 100, 0}}); });
  ASSERT_OK_AND_ASSIGN(Request request, store.ReadRequest());
  Reply reply;
  reply.request_id = request.request_id;
  reply.body = ObjectsReply{{CreatedAt(a, 64, 100)}, false};  // one entry for two objects
  store.Send(reply);
  creator.join();
  EXPECT_THAT(created, HasErrorCode(ErrorCode::kProtocolError));
  ASSERT_OK_AND_ASSIGN(Request abort, store.ReadRequest());
  ASSERT_TRUE(std::holds_alternative<AbortRequest>(abort.body));
  EXPECT_EQ(std::get<AbortRequest>(abort.body).id, a);
}

TEST(ClientConnectionTest, GarbageFromTheStoreBreaksTheConnectionWithoutCrashing) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<StatsReply> stats = absl::UnknownError("not yet");
  std::thread caller([&] { stats = client->Stats(); });
  ASSERT_OK(store.ReadRequest().status());
  store.SendRaw(EncodeFrame("this is not a flatbuffer at all"));
  caller.join();
  EXPECT_THAT(stats, HasErrorCode(ErrorCode::kProtocolError));
  EXPECT_THAT(client->Stats(), HasErrorCode(ErrorCode::kProtocolError)) << "the connection stays broken";
}

TEST(ClientConnectionTest, AStoreThatHangsUpMidFrameIsUnavailable) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<bool> contains = absl::UnknownError("not yet");
  std::thread caller([&] { contains = client->Contains(ObjectID::FromLabel("x")); });
  ASSERT_OK(store.ReadRequest().status());
  store.SendRaw(EncodeFrame(std::string(100, 'x')).substr(0, 20));
  store.Close();
  caller.join();
  EXPECT_THAT(contains, HasErrorCode(ErrorCode::kUnavailable));
}

TEST(ClientConnectionTest, AReplyOfTheWrongTypeIsAProtocolError) {
  FakeStore store(1 << 20, 1 << 20);
  std::unique_ptr<Client> client = ConnectTo(store);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<StatsReply> stats = absl::UnknownError("not yet");
  std::thread caller([&] { stats = client->Stats(); });
  ASSERT_OK_AND_ASSIGN(Request request, store.ReadRequest());
  Reply reply;
  reply.request_id = request.request_id;
  reply.body = EvictReply{1, 1};
  store.Send(reply);
  caller.join();
  EXPECT_THAT(stats, HasErrorCode(ErrorCode::kProtocolError));
}

}  // namespace
}  // namespace rplasma::testing
