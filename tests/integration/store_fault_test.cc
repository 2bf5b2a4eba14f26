// rplasma-store under hostile or broken clients: malformed frames, stalls, fd floods, connection
// churn, other uids, slow subscribers. The store must answer with an error or close the one
// connection, never stop, never leak fds, and keep serving everyone else.
#include <fcntl.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/base/socket_io.h"
#include "protocol/frame.h"
#include "protocol/store_messages.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::RawStoreClient;
using ::rplasma::testing::StoreProcess;
using ::rplasma::testing::StoreProcessOptions;
using ::rplasma::testing::WaitFor;

std::string Header(uint32_t length, uint16_t version = kProtocolVersion, uint16_t reserved = 0) {
  std::string h(kFrameHeaderBytes, '\0');
  for (int i = 0; i < 4; ++i) h[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  h[4] = static_cast<char>(version & 0xff);
  h[5] = static_cast<char>(version >> 8);
  h[6] = static_cast<char>(reserved & 0xff);
  h[7] = static_cast<char>(reserved >> 8);
  return h;
}

// A StoreRequest whose union type is `body_type` (raw flatbuffers, bypassing the encoder).
std::string RequestWithBodyType(uint8_t body_type) {
  flatbuffers::FlatBufferBuilder b;
  flatbuffers::uoffset_t inner_start = b.StartTable();
  flatbuffers::uoffset_t inner = b.EndTable(inner_start);
  flatbuffers::uoffset_t start = b.StartTable();
  b.AddElement<uint64_t>(4, 9, 0);                   // request_id
  b.AddElement<uint8_t>(6, body_type, 0);            // body_type
  b.AddOffset(8, flatbuffers::Offset<void>(inner));  // body
  flatbuffers::uoffset_t root = b.EndTable(start);
  b.Finish(flatbuffers::Offset<void>(root));
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// Reads what the store sends after bad input: at most one error reply, then end of stream.
// Returns the error code of the reply (kOk if the store just closed).
absl::StatusOr<ErrorCode> ErrorThenClose(int fd) {
  ErrorCode code = ErrorCode::kOk;
  for (int frames = 0;; ++frames) {
    absl::StatusOr<std::string> payload = ReadFrame(fd, kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(5));
    if (!payload.ok()) {
      if (ErrorCodeOf(payload.status()) == ErrorCode::kUnavailable) return code;  // closed
      return payload.status();
    }
    if (frames > 0) return ProtocolError("more than one reply after bad input");
    ASSIGN_OR_RETURN(Reply reply, DecodeReply(*payload));
    if (reply.error == ErrorCode::kOk) return ProtocolError("bad input got an OK reply");
    code = reply.error;
  }
}

// A well-formed request with out-of-bounds values: one error reply naming request `rid`, then the
// same connection still answers (a Stats request).
absl::Status ErrorThenStillServed(int fd, uint64_t rid) {
  ASSIGN_OR_RETURN(std::string payload, ReadFrame(fd, kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(5)));
  ASSIGN_OR_RETURN(Reply reply, DecodeReply(payload));
  if (reply.error != ErrorCode::kInvalidArgument || reply.request_id != rid) {
    return ProtocolError(absl::StrCat("expected InvalidArgument for request ", rid, ", got ",
                                      ErrorCodeName(reply.error), " for ", reply.request_id));
  }
  const std::string stats = EncodeFrame(EncodeRequest(Request{rid + 1, StatsRequest{}}));
  RETURN_IF_ERROR(WriteAll(fd, stats.data(), stats.size()));
  ASSIGN_OR_RETURN(payload, ReadFrame(fd, kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(5)));
  ASSIGN_OR_RETURN(reply, DecodeReply(payload));
  if (reply.request_id != rid + 1 || !std::holds_alternative<StatsReply>(reply.body)) {
    return ProtocolError("the connection was not served after the error");
  }
  return absl::OkStatus();
}

class StoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void Start(StoreProcessOptions options) {
    ASSERT_OK_AND_ASSIGN(store_, StoreProcess::Start(std::move(options)));
    baseline_fds_ = store_->OpenFdCount();
    ASSERT_OK_AND_ASSIGN(bystander_, RawStoreClient::Connect(store_->socket_path(), "bystander"));
  }
  void TearDown() override {
    // A clean SIGTERM exit also proves the store had no sanitizer finding or leak (LeakSanitizer
    // turns the exit status non-zero) in sanitizer builds.
    if (store_ != nullptr && store_->running()) {
      EXPECT_OK(store_->StopCleanly());
    }
    if (HasFailure() && store_ != nullptr) std::cerr << "store log:\n" << store_->ReadLog();
  }
  StatsReply Stats() {
    absl::StatusOr<Reply> r = bystander_->Call(StatsRequest{});
    EXPECT_OK(r);
    if (!r.ok()) return {};
    const StatsReply* s = std::get_if<StatsReply>(&r->body);
    EXPECT_NE(s, nullptr);
    return s != nullptr ? *s : StatsReply{};
  }
  // The store is alive, serves the bystander, and has no connection but the bystander's.
  void ExpectHealthyAndBackAtBaseline() {
    ASSERT_TRUE(store_->running());
    EXPECT_TRUE(WaitFor([&] { return Stats().clients == 1; }, absl::Seconds(5)));
    StatsReply s = Stats();
    EXPECT_EQ(s.ref_count, 0u);
    EXPECT_EQ(s.used_bytes, 0u);
    // Baseline plus the bystander's connection.
    EXPECT_TRUE(WaitFor([&] { return store_->OpenFdCount() == baseline_fds_ + 1; }, absl::Seconds(5)))
        << store_->OpenFdCount() << " fds, baseline " << baseline_fds_ << " + 1";
  }

  std::unique_ptr<StoreProcess> store_;
  std::unique_ptr<RawStoreClient> bystander_;
  int baseline_fds_ = 0;
};

TEST_F(StoreFaultTest, MalformedFramesGetAnErrorOrACloseOutOfBoundsValuesAnErrorAndTheStoreKeepsServing) {
  std::string connect = EncodeFrame(EncodeRequest(Request{1, ConnectRequest{"bad"}}));
  std::vector<ObjectID> too_many(kMaxIdsPerRequest + 1, ObjectID::FromLabel("x"));
  const std::vector<uint8_t> too_much_inline(kMaxInlinePutBytes + 1, 7);
  PutRequest huge_put;
  huge_put.id = ObjectID::FromLabel("huge");
  huge_put.data = too_much_inline;
  struct Case {
    std::string name;
    bool connect_first;
    std::string bytes;
    uint64_t kept_rid = 0;  // non-zero: answered with an error for this request, connection kept
  };
  std::vector<Case> corpus = {
      {"bad version", false, Header(4, 99) + "abcd"},
      {"reserved bits", true, Header(4, kProtocolVersion, 1) + "abcd"},
      {"zero length", true, Header(0)},
      {"huge length", false, Header(0xffffffffu)},
      {"just above the cap", true, Header(kDefaultMaxFrameBytes + 1)},
      {"garbage flatbuffer", true, EncodeFrame(std::string(64, '\xff'))},
      {"short flatbuffer", false, EncodeFrame("ab")},
      {"unknown union type", true, EncodeFrame(RequestWithBodyType(200))},
      {"union type NONE", true, EncodeFrame(RequestWithBodyType(0))},
      {"get without ids", true, EncodeFrame(RequestWithBodyType(5)), 9},
      {"oversized id list", true, EncodeFrame(EncodeRequest(Request{2, GetRequest{too_many, 0}})), 2},
      {"oversized delete list", true, EncodeFrame(EncodeRequest(Request{2, DeleteRequest{too_many}})), 2},
      {"list limit zero", true, EncodeFrame(EncodeRequest(Request{2, ListRequest{std::nullopt, 0}})), 2},
      {"negative timeout", true, EncodeFrame(EncodeRequest(Request{2, GetRequest{{ObjectID()}, -5}})), 2},
      {"put above the inline limit", true, EncodeFrame(EncodeRequest(Request{2, huge_put})), 2},
      {"request before connect", false, EncodeFrame(EncodeRequest(Request{2, StatsRequest{}}))},
  };
  for (const Case& c : corpus) {
    SCOPED_TRACE(c.name);
    ASSERT_OK_AND_ASSIGN(auto conn, RawStoreClient::ConnectOnly(store_->socket_path()));
    std::string bytes = c.connect_first ? connect + c.bytes : c.bytes;
    ASSERT_OK(WriteAll(conn->fd(), bytes.data(), bytes.size()));
    if (c.connect_first) {
      // The Connect reply (with the arena fd) comes first.
      char one;
      ASSERT_OK_AND_ASSIGN(ReceivedWithFd first, RecvWithFd(conn->fd(), &one, 1));
      ASSERT_TRUE(first.fd.valid());
      char rest[kFrameHeaderBytes - 1];
      ASSERT_OK(ReadAll(conn->fd(), rest, sizeof(rest)));
      std::string header = std::string(1, one) + std::string(rest, sizeof(rest));
      ASSERT_OK_AND_ASSIGN(uint32_t length, ParseFrameHeader(header.data(), kDefaultMaxFrameBytes));
      std::string payload(length, '\0');
      ASSERT_OK(ReadAll(conn->fd(), payload.data(), length));
    }
    if (c.kept_rid != 0) {
      EXPECT_OK(ErrorThenStillServed(conn->fd(), c.kept_rid));
    } else {
      absl::StatusOr<ErrorCode> code = ErrorThenClose(conn->fd());
      ASSERT_OK(code);
      EXPECT_THAT(*code, ::testing::AnyOf(ErrorCode::kOk, ErrorCode::kProtocolError));
    }
    EXPECT_EQ(Stats().capacity, 64u << 20);  // everyone else is still served
  }
  ExpectHealthyAndBackAtBaseline();
}

TEST_F(StoreFaultTest, RandomBytesNeverStopTheStore) {
  std::mt19937_64 rng(2024);
  for (int i = 0; i < 200; ++i) {
    ASSERT_OK_AND_ASSIGN(auto conn, RawStoreClient::ConnectOnly(store_->socket_path()));
    std::string payload(1 + rng() % 300, '\0');
    for (char& ch : payload) ch = static_cast<char>(rng());
    std::string bytes = i % 2 == 0 ? EncodeFrame(payload) : payload;  // framed or not at all
    ASSERT_OK(WriteAll(conn->fd(), bytes.data(), bytes.size()));
    ::shutdown(conn->fd(), SHUT_WR);
    ASSERT_OK(ErrorThenClose(conn->fd())) << "case " << i;
  }
  ExpectHealthyAndBackAtBaseline();
}

TEST_F(StoreFaultTest, HalfFramesThenCloseAreForgotten) {
  std::string frame = EncodeFrame(EncodeRequest(Request{1, ConnectRequest{"half"}}));
  for (size_t cut : {size_t{1}, size_t{4}, kFrameHeaderBytes, frame.size() - 1}) {
    ASSERT_OK_AND_ASSIGN(auto conn, RawStoreClient::ConnectOnly(store_->socket_path()));
    ASSERT_OK(WriteAll(conn->fd(), frame.data(), cut));
  }
  ExpectHealthyAndBackAtBaseline();
}

TEST_F(StoreFaultTest, ClientStalledMidFrameDoesNotBlockOthers) {
  ASSERT_OK_AND_ASSIGN(auto staller, RawStoreClient::Connect(store_->socket_path(), "staller"));
  std::string frame = EncodeFrame(EncodeRequest(Request{77, StatsRequest{}}));
  ASSERT_OK(WriteAll(staller->fd(), frame.data(), frame.size() / 2));

  ObjectID id = ObjectID::FromLabel("served");
  ASSERT_OK_AND_ASSIGN(Reply r, bystander_->Call(CreateRequest{id, 100, 0, true}));
  ASSERT_OK(r.status());
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(SealRequest{id, 0}));
  ASSERT_OK(r.status());
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(GetRequest{{id}, 0}));
  EXPECT_EQ(std::get<ObjectsReply>(r.body).objects[0].error, ErrorCode::kOk);

  // The stalled client finishes its frame and is answered.
  ASSERT_OK(WriteAll(staller->fd(), frame.data() + frame.size() / 2, frame.size() - frame.size() / 2));
  ASSERT_OK_AND_ASSIGN(Reply stalled, staller->Receive());
  EXPECT_EQ(stalled.request_id, 77u);
  EXPECT_TRUE(std::holds_alternative<StatsReply>(stalled.body));
  staller.reset();
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(ReleaseRequest{{id, id}}));
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(DeleteRequest{{id}}));
  ExpectHealthyAndBackAtBaseline();
}

// Half a frame then silence: the store closes the connection once --partial_frame_timeout has
// passed, and serves everyone else meanwhile.
TEST_F(StoreFaultTest, ClientStalledMidFrameIsDroppedAfterThePartialFrameTimeout) {
  ASSERT_OK(store_->StopCleanly());
  StoreProcessOptions options;
  options.extra_args = {"--partial_frame_timeout", "400ms"};
  ASSERT_NO_FATAL_FAILURE(Start(std::move(options)));
  ASSERT_OK_AND_ASSIGN(auto staller, RawStoreClient::Connect(store_->socket_path(), "staller"));
  const std::string frame = EncodeFrame(EncodeRequest(Request{77, StatsRequest{}}));
  const absl::Time stalled_at = absl::Now();
  ASSERT_OK(WriteAll(staller->fd(), frame.data(), frame.size() / 2));
  // Others are served while the staller holds its half frame.
  EXPECT_EQ(Stats().clients, 2u);
  // The store closes the staller: end of stream, no reply.
  absl::StatusOr<Reply> reply = staller->Receive(absl::Seconds(10));
  const absl::Duration waited = absl::Now() - stalled_at;
  EXPECT_THAT(reply, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_GE(waited, absl::Milliseconds(350));
  EXPECT_LT(waited, absl::Seconds(3));
  EXPECT_NE(store_->ReadLog().find("(staller, pid"), std::string::npos);
  EXPECT_NE(store_->ReadLog().find("--partial_frame_timeout"), std::string::npos) << store_->ReadLog();
  staller.reset();
  ExpectHealthyAndBackAtBaseline();
}

// Many clients each holding most of a large frame: past --max_partial_frame_bytes the one holding
// the most is dropped at once (long before the partial-frame timeout); the others stay.
TEST_F(StoreFaultTest, PartialFramesOverTheOverallCapDropTheLargestHolder) {
  ASSERT_OK(store_->StopCleanly());
  StoreProcessOptions options;
  options.extra_args = {"--max_partial_frame_bytes", "1M", "--partial_frame_timeout", "60s"};
  ASSERT_NO_FATAL_FAILURE(Start(std::move(options)));
  // A frame announcing 1000 KiB of payload, of which each client sends only a part.
  const std::string header = Header(1000 << 10);
  const std::string body(1000 << 10, 'x');
  ASSERT_OK_AND_ASSIGN(auto small, RawStoreClient::ConnectOnly(store_->socket_path()));
  ASSERT_OK(WriteAll(small->fd(), header.data(), header.size()));
  ASSERT_OK(WriteAll(small->fd(), body.data(), 300 << 10));
  ASSERT_TRUE(WaitFor([&] { return Stats().clients == 2; }, absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(auto large, RawStoreClient::ConnectOnly(store_->socket_path()));
  ASSERT_OK(WriteAll(large->fd(), header.data(), header.size()));
  // The store may drop it before the last of these bytes are written (once what it has read takes
  // the total over the cap): the write then ends in a broken pipe, which is the drop itself.
  const absl::Status wrote = WriteAll(large->fd(), body.data(), 800 << 10);
  EXPECT_TRUE(wrote.ok() || ErrorCodeOf(wrote) == ErrorCode::kUnavailable) << wrote;
  // 1100 KiB buffered in partial frames > 1 MiB: the large holder goes, within far less than 60 s.
  absl::StatusOr<Reply> dropped = large->Receive(absl::Seconds(10));
  EXPECT_THAT(dropped, HasErrorCode(ErrorCode::kUnavailable));
  EXPECT_NE(store_->ReadLog().find("--max_partial_frame_bytes"), std::string::npos) << store_->ReadLog();
  EXPECT_EQ(Stats().clients, 2u);  // the bystander and the small holder
  large.reset();
  small.reset();
  ExpectHealthyAndBackAtBaseline();
}

// An arena four times the machine's RAM is refused at start, before anything is reserved (a
// reservation of that size would fail in fallocate or wake the OOM killer); a small one starts.
TEST_F(StoreFaultTest, AnArenaLargerThanTheHostCanBackIsRefusedBeforeAnyReservation) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t mem_total_kb = 0;
  while (meminfo >> key && key != "MemTotal:") {
  }
  ASSERT_TRUE(meminfo >> mem_total_kb);
  const uint64_t too_much = mem_total_kb * 1024 * 4;
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  ASSERT_OK_AND_ASSIGN(bench::ChildProcess refused,
                       bench::ChildProcess::Start({absl::StrCat(RPLASMA_BIN_DIR, "/rplasma-store"), "--socket",
                                                   dir.Join("store.sock"), "--memory", absl::StrCat(too_much)},
                                                  dir.Join("store.log")));
  std::optional<int> status = refused.Wait(absl::Seconds(10));
  ASSERT_TRUE(status.has_value()) << "the store did not exit";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1);
  std::ifstream log(dir.Join("store.log"));
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("can back only"), std::string::npos) << text;
  EXPECT_EQ(text.find("fallocate"), std::string::npos) << text;
  // The fixture's 64 MiB store started, and still serves.
  EXPECT_EQ(Stats().clients, 1u);
}

// Sends `frame` with `count` fds (of /dev/null) attached, as SCM_RIGHTS.
absl::Status SendWithManyFds(int sock, const std::string& frame, int count) {
  std::vector<UniqueFd> fds;
  std::vector<int> raw;
  for (int i = 0; i < count; ++i) {
    fds.emplace_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    raw.push_back(fds.back().get());
  }
  ASSIGN_OR_RETURN(size_t sent, SendSomeWithFds(sock, frame, raw, SocketWait::kBlock));
  if (sent != frame.size()) return MakeError(ErrorCode::kInternal, absl::StrCat("fd flood: sendmsg sent ", sent));
  return absl::OkStatus();
}

TEST_F(StoreFaultTest, FdFloodDoesNotLeakFdsInTheStore) {
  ASSERT_OK_AND_ASSIGN(auto flooder, RawStoreClient::Connect(store_->socket_path(), "flooder"));
  for (int i = 0; i < 100; ++i) {
    std::string frame = EncodeFrame(EncodeRequest(Request{static_cast<uint64_t>(1000 + i), StatsRequest{}}));
    ASSERT_OK(SendWithManyFds(flooder->fd(), frame, 250));
    ASSERT_OK_AND_ASSIGN(Reply r, flooder->Receive());
    EXPECT_EQ(r.request_id, 1000u + i);  // requests carrying fds are still served; the fds are closed
  }
  // Store: baseline + bystander + flooder.
  EXPECT_EQ(store_->OpenFdCount(), baseline_fds_ + 2);
  flooder.reset();
  ExpectHealthyAndBackAtBaseline();
  EXPECT_THAT(store_->ReadLog(), ::testing::HasSubstr("fds; all were closed"));
}

TEST_F(StoreFaultTest, ThousandConnectDisconnectCyclesLeaveTheFdCountUnchanged) {
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK_AND_ASSIGN(auto c, RawStoreClient::Connect(store_->socket_path(), "churn"));
    if (i % 3 == 0) {
      ObjectID id = ObjectID::FromLabel(absl::StrCat("churn-", i));
      ASSERT_OK_AND_ASSIGN(Reply r, c->Call(CreateRequest{id, 1000, 0, true}));  // aborted at close
      ASSERT_OK(r.status());
    }
  }
  ExpectHealthyAndBackAtBaseline();
  EXPECT_EQ(Stats().objects_created, 0u);
}

// True when the peer of the Unix stream socket `sock` has stopped reading from it: what we sent
// and it has not read fills at least half our send buffer, while replies wait for us unread.
bool PeerStoppedReading(int sock) {
  int unread_by_peer = 0, unread_by_us = 0, sndbuf = 0;
  socklen_t len = sizeof(sndbuf);
  if (::ioctl(sock, SIOCOUTQ, &unread_by_peer) != 0 || ::ioctl(sock, FIONREAD, &unread_by_us) != 0 ||
      ::getsockopt(sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) != 0) {
    return false;
  }
  return unread_by_us > 0 && unread_by_peer >= sndbuf / 2;
}

TEST_F(StoreFaultTest, ClientThatStopsReadingIsPausedNotDropped) {
  ASSERT_OK_AND_ASSIGN(auto pipeliner, RawStoreClient::Connect(store_->socket_path(), "pipeliner"));
  constexpr int kRequests = 20000;  // ~5 MB of Stats replies: far above the pause threshold
  std::atomic<bool> all_sent{false};
  std::thread writer([&] {
    for (int i = 0; i < kRequests; ++i) {
      if (!pipeliner->Send(StatsRequest{}).ok()) return;
    }
    all_sent = true;
  });
  // Let the store fill its queue for us before we start reading: it has paused our input once it
  // stops reading our requests (or, if it never pauses, the writer gets through them all).
  EXPECT_TRUE(WaitFor([&] { return all_sent.load() || PeerStoppedReading(pipeliner->fd()); }, absl::Seconds(30)))
      << "the store neither paused our input nor read every request";
  EXPECT_EQ(Stats().clients, 2u);
  int received = 0;
  uint64_t last_rid = 0;
  for (; received < kRequests; ++received) {
    absl::StatusOr<Reply> r = pipeliner->Receive();
    if (!r.ok()) break;
    ASSERT_GT(r->request_id, last_rid);  // in order
    last_rid = r->request_id;
  }
  writer.join();
  EXPECT_EQ(received, kRequests);
  pipeliner.reset();
  ExpectHealthyAndBackAtBaseline();
}

TEST_F(StoreFaultTest, SubscriberThatFallsBehindIsDisconnected) {
  StoreProcessOptions options;
  options.extra_args = {"--max_output_bytes", "256K"};
  Start(options);
  ASSERT_OK_AND_ASSIGN(auto sub, RawStoreClient::Connect(store_->socket_path(), "slow-subscriber"));
  int small = 4096;
  ::setsockopt(sub->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ASSERT_OK_AND_ASSIGN(Reply r, sub->Call(SubscribeRequest{false}));
  ASSERT_OK(r.status());
  EXPECT_EQ(Stats().subscribers, 1u);
  // Each cycle makes two events; the subscriber reads none.
  for (int i = 0; i < 20000 && Stats().subscribers == 1; ++i) {
    ObjectID id = ObjectID::FromLabel(absl::StrCat("event-", i));
    ASSERT_OK(bystander_->Send(CreateRequest{id, 64, 0, true}));
    ASSERT_OK(bystander_->Send(SealRequest{id, 0}));
    ASSERT_OK(bystander_->Send(ReleaseRequest{{id}}));
    ASSERT_OK(bystander_->Send(DeleteRequest{{id}}));
    for (int k = 0; k < 4; ++k) ASSERT_OK(bystander_->Receive());
  }
  EXPECT_EQ(Stats().subscribers, 0u);
  EXPECT_THAT(store_->ReadLog(), ::testing::HasSubstr("fell behind"));
  sub.reset();
  ExpectHealthyAndBackAtBaseline();
}

TEST_F(StoreFaultTest, ClientWhoseUnreadGetAnswersOverflowTheQueueIsDisconnected) {
  StoreProcessOptions options;
  options.extra_args = {"--max_output_bytes", "256K"};
  Start(options);
  ASSERT_OK_AND_ASSIGN(auto greedy, RawStoreClient::Connect(store_->socket_path(), "greedy"));
  int small = 4096;
  ::setsockopt(greedy->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ObjectID id = ObjectID::FromLabel("awaited");
  std::vector<ObjectID> ids(16, id);
  constexpr int kGets = 2000;  // answers: ~2000 x 16 x 72 bytes, far above 256 KiB
  for (int i = 0; i < kGets; ++i) ASSERT_OK(greedy->Send(GetRequest{ids, -1}));
  EXPECT_TRUE(WaitFor([&] { return Stats().waiting_gets == kGets; }, absl::Seconds(10)));
  ASSERT_OK_AND_ASSIGN(Reply r, bystander_->Call(CreateRequest{id, 64, 0, true}));
  ASSERT_OK(r.status());
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(SealRequest{id, 0}));
  ASSERT_OK(r.status());
  EXPECT_TRUE(WaitFor([&] { return Stats().clients == 1; }, absl::Seconds(10)));
  EXPECT_THAT(store_->ReadLog(), ::testing::HasSubstr("output queue over"));
  // The greedy client's references went with it.
  StatsReply s = Stats();
  EXPECT_EQ(s.waiting_gets, 0u);
  EXPECT_EQ(s.ref_count, 1u);  // the creator's
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(ReleaseRequest{{id}}));
  ASSERT_OK_AND_ASSIGN(r, bystander_->Call(DeleteRequest{{id}}));
  greedy.reset();
  ExpectHealthyAndBackAtBaseline();
}

// Runs `body` in a child process as uid/gid 65534 (nobody); returns its exit code.
int RunAsNobody(const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(100);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 101;
}

TEST_F(StoreFaultTest, ClientOfAnotherUidIsRefused) {
  if (::geteuid() != 0) RPLASMA_SKIP_TEST("root", "needs root to run a client as another uid");
  const std::string path = store_->socket_path();
  // Layer 1, the filesystem: the socket's directory is 0700 and the socket 0600, so another uid
  // cannot even connect (EACCES from connect(2)).
  int rc = RunAsNobody([&] {
    absl::StatusOr<UniqueFd> fd = UnixConnect(path);
    return !fd.ok() && std::string(fd.status().message()).find("ermission denied") != std::string::npos ? 0 : 1;
  });
  EXPECT_EQ(rc, 0) << "connect as nobody was not refused by the filesystem";

  // Layer 2, the store: open the filesystem up, so only the store's SO_PEERCRED check stands in the
  // way. The connection is accepted by the kernel, then closed by the store before any reply.
  std::string dir = path.substr(0, path.rfind('/'));
  ASSERT_EQ(::chmod(store_->dir().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  rc = RunAsNobody([&] {
    absl::StatusOr<UniqueFd> fd = UnixConnect(path);
    if (!fd.ok()) return 2;
    std::string frame = EncodeFrame(EncodeRequest(Request{1, ConnectRequest{"intruder"}}));
    (void)WriteAll(fd->get(), frame.data(), frame.size());
    absl::StatusOr<std::string> reply = ReadFrame(fd->get(), kDefaultMaxFrameBytes, absl::Now() + absl::Seconds(5));
    return !reply.ok() && ErrorCodeOf(reply.status()) == ErrorCode::kUnavailable ? 0 : 3;
  });
  EXPECT_EQ(rc, 0) << "the store answered a client of another uid";
  EXPECT_THAT(store_->ReadLog(), ::testing::HasSubstr("refusing a connection from pid"));
  ExpectHealthyAndBackAtBaseline();
}

}  // namespace
}  // namespace rplasma
