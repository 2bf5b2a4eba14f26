// The store's request/reply behaviour over the raw protocol, against a real rplasma-store.
// Every test ends with a leak audit: no bytes, objects or references left, fds at baseline.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/base/logging.h"
#include "protocol/store_messages.h"
#include "tests/integration/store_protocol_fixture.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"
#include "tests/support/store_process.h"

namespace rplasma {
namespace {

using ::rplasma::testing::BodyOf;
using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::RawStoreClient;
using ::rplasma::testing::StoreProcess;
using ::rplasma::testing::StoreProcessOptions;
using ::rplasma::testing::StoreProtocolTest;
using ::rplasma::testing::WaitFor;
using ::testing::ElementsAre;

// The system's default huge page size in kB (Hugepagesize in /proc/meminfo); 0 if none.
uint64_t DefaultHugepageKb() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    uint64_t kb = 0;
    if (std::sscanf(line.c_str(), "Hugepagesize: %" SCNu64 " kB", &kb) == 1) return kb;
  }
  return 0;
}

// Makes `pages` free huge pages of `page_kb` available to a test: if fewer are free and this
// process is root, raises the pool's nr_hugepages and puts the old value back at the end;
// otherwise ok() is false and why() says why.
class HugePageReservation {
 public:
  HugePageReservation(uint64_t page_kb, int64_t pages)
      : pool_(absl::StrCat("/sys/kernel/mm/hugepages/hugepages-", page_kb, "kB/")) {
    const int64_t have = Read("free_hugepages") - Read("resv_hugepages");
    if (have >= pages) return;
    if (::geteuid() != 0) {
      why_ = absl::StrCat("needs ", pages, " free huge pages of ", page_kb, " kB (", std::max<int64_t>(have, 0),
                          " free), and only root can reserve them (", pool_, "nr_hugepages)");
      return;
    }
    old_total_ = Read("nr_hugepages");
    if (old_total_ < 0 || !Write("nr_hugepages", old_total_ + pages - std::max<int64_t>(have, 0))) {
      why_ = absl::StrCat("cannot write ", pool_, "nr_hugepages");
      old_total_ = -1;
      return;
    }
    if (Read("free_hugepages") - Read("resv_hugepages") < pages) {
      why_ = absl::StrCat("the kernel could not find ", pages, " huge pages of ", page_kb, " kB (memory fragmented?)");
    }
  }
  ~HugePageReservation() {
    if (old_total_ >= 0) Write("nr_hugepages", old_total_);
  }
  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }

 private:
  int64_t Read(const std::string& name) const {
    std::ifstream in(pool_ + name);
    int64_t value = -1;
    in >> value;
    return value;
  }
  bool Write(const std::string& name, int64_t value) const {
    std::ofstream out(pool_ + name);
    out << value << std::endl;
    return static_cast<bool>(out);
  }

  const std::string pool_;
  int64_t old_total_ = -1;  // >= 0: restore this at the end
  std::string why_;
};

TEST_F(StoreProtocolTest, CreateSealGetRoundTripsBytesThroughTheArena) {
  ObjectID id = ObjectID::FromLabel("round-trip");
  ASSERT_OK_AND_ASSIGN(Reply created, client_->Call(CreateRequest{id, 100, 10, true}));
  ASSERT_OK(created.status());
  const CreateReply& c = BodyOf<CreateReply>(created);
  EXPECT_EQ(c.offset % 64, 0u);

  uint64_t arena = client_->connect_reply().arena_size;
  EXPECT_EQ(arena, 64u << 20);
  void* base = ::mmap(nullptr, arena, PROT_READ | PROT_WRITE, MAP_SHARED, client_->arena_fd(), 0);
  ASSERT_NE(base, MAP_FAILED);
  std::memset(static_cast<char*>(base) + c.offset, 0xab, 110);
  ASSERT_OK_AND_ASSIGN(Reply sealed, client_->Call(SealRequest{id, 42}));
  ASSERT_OK(sealed.status());

  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Call(GetRequest{{id}, 0}));
  ASSERT_OK(got.status());
  const ObjectsReply& objects = BodyOf<ObjectsReply>(got);
  ASSERT_EQ(objects.objects.size(), 1u);
  const ObjectInfo& info = objects.objects[0];
  EXPECT_EQ(info.error, ErrorCode::kOk);
  EXPECT_EQ(info.state, ObjectState::kSealed);
  EXPECT_EQ(info.offset, c.offset);
  EXPECT_EQ(info.data_size, 100u);
  EXPECT_EQ(info.metadata_size, 10u);
  EXPECT_EQ(info.checksum, 42u);
  EXPECT_EQ(info.generation, c.generation);
  EXPECT_EQ(info.ref_count, 2);
  void* rbase = ::mmap(nullptr, arena, PROT_READ, MAP_SHARED, reader->arena_fd(), 0);
  ASSERT_NE(rbase, MAP_FAILED);
  EXPECT_EQ(static_cast<unsigned char*>(rbase)[info.offset + 109], 0xab);
  ::munmap(base, arena);
  ::munmap(rbase, arena);
  EXPECT_THAT(Codes(*reader, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  EXPECT_THAT(Codes(*reader, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kInvalidArgument));
  reader.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, PassedArenaFdCannotBeResized) {
  EXPECT_NE(::ftruncate(client_->arena_fd(), 4096), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(client_->arena_fd(), int64_t{1} << 32), 0);
  struct stat st {};
  ASSERT_EQ(::fstat(client_->arena_fd(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), client_->connect_reply().arena_size);
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, RequestsReportEveryLifecycleError) {
  ObjectID id = ObjectID::FromLabel("errors");
  ObjectID missing = ObjectID::FromLabel("missing");
  ASSERT_OK_AND_ASSIGN(auto other, RawStoreClient::Connect(store_->socket_path(), "other"));
  ASSERT_OK_AND_ASSIGN(Reply r, client_->Call(CreateRequest{id, 10, 0, true}));
  ASSERT_OK(r.status());
  ASSERT_OK_AND_ASSIGN(r, client_->Call(CreateRequest{id, 10, 0, true}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kObjectExists));
  ASSERT_OK_AND_ASSIGN(r, other->Call(SealRequest{id, 0}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kNotCreator));
  ASSERT_OK_AND_ASSIGN(r, other->Call(AbortRequest{id}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kNotCreator));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(SealRequest{missing, 0}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kObjectNotFound));
  EXPECT_THAT(Codes(*other, ContainsRequest{{id, missing}}),
              ElementsAre(ErrorCode::kObjectNotSealed, ErrorCode::kObjectNotFound));
  EXPECT_THAT(Codes(*other, DeleteRequest{{id, missing}}),
              ElementsAre(ErrorCode::kObjectNotSealed, ErrorCode::kObjectNotFound));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(SealRequest{id, 0}));
  ASSERT_OK(r.status());
  ASSERT_OK_AND_ASSIGN(r, client_->Call(SealRequest{id, 0}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kObjectAlreadySealed));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(AbortRequest{id}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kObjectAlreadySealed));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(CreateRequest{missing, 65u << 20, 0, true}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kOutOfMemory));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(ConnectRequest{"again"}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kInvalidArgument));
  other.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, DeleteOfAReferencedObjectCompletesAtTheLastRelease) {
  ObjectID id = ObjectID::FromLabel("deferred");
  CreateSealed(*client_, id);
  EXPECT_THAT(Codes(*client_, DeleteRequest{{id}}), ElementsAre(ErrorCode::kOk));
  EXPECT_THAT(Codes(*client_, ContainsRequest{{id}}), ElementsAre(ErrorCode::kObjectNotFound));
  EXPECT_GT(Stats(*client_).used_bytes, 0u);
  EXPECT_THAT(Codes(*client_, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  StatsReply s = Stats(*client_);
  EXPECT_EQ(s.used_bytes, 0u);
  EXPECT_EQ(s.objects_sealed, 0u);
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, WaitingGetIsAnsweredLaterWhileOtherRequestsAreServed) {
  ObjectID id = ObjectID::FromLabel("later");
  ASSERT_OK_AND_ASSIGN(uint64_t get_rid, client_->Send(GetRequest{{id}, -1}));
  // The Get waits; Stats on the same connection is answered first.
  ASSERT_OK_AND_ASSIGN(Reply stats, client_->Call(StatsRequest{}));
  EXPECT_EQ(BodyOf<StatsReply>(stats).waiting_gets, 1u);

  ASSERT_OK_AND_ASSIGN(auto writer, RawStoreClient::Connect(store_->socket_path(), "writer"));
  CreateSealed(*writer, id);
  ASSERT_OK_AND_ASSIGN(Reply got, client_->Receive());
  EXPECT_EQ(got.request_id, get_rid);
  const ObjectsReply& objects = BodyOf<ObjectsReply>(got);
  ASSERT_EQ(objects.objects.size(), 1u);
  EXPECT_EQ(objects.objects[0].error, ErrorCode::kOk);
  EXPECT_EQ(objects.objects[0].ref_count, 2);  // the writer's and ours
  EXPECT_THAT(Codes(*client_, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  writer.reset();
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, GetTimeoutReportsNotFoundAndNotSealedWithoutReferences) {
  ObjectID sealed = ObjectID::FromLabel("sealed");
  ObjectID unsealed = ObjectID::FromLabel("unsealed");
  ObjectID missing = ObjectID::FromLabel("missing");
  ASSERT_OK_AND_ASSIGN(auto writer, RawStoreClient::Connect(store_->socket_path(), "writer"));
  CreateSealed(*writer, sealed);
  ASSERT_OK_AND_ASSIGN(Reply r, writer->Call(CreateRequest{unsealed, 10, 0, true}));
  ASSERT_OK(r.status());
  for (int64_t timeout_ms : {int64_t{0}, int64_t{50}}) {
    ASSERT_OK_AND_ASSIGN(Reply got, client_->Call(GetRequest{{sealed, unsealed, missing}, timeout_ms}));
    const ObjectsReply& objects = BodyOf<ObjectsReply>(got);
    ASSERT_EQ(objects.objects.size(), 3u);
    EXPECT_EQ(objects.objects[0].error, ErrorCode::kOk);
    EXPECT_EQ(objects.objects[1].error, ErrorCode::kObjectNotSealed);
    EXPECT_EQ(objects.objects[1].id, unsealed);
    EXPECT_EQ(objects.objects[2].error, ErrorCode::kObjectNotFound);
    EXPECT_EQ(objects.objects[2].id, missing);
  }
  // Only the two served entries took references.
  EXPECT_EQ(Stats(*client_).ref_count, 2u + 2u);  // writer: sealed + unsealed; us: sealed twice
  writer.reset();                                 // aborts `unsealed`, drops the writer's reference on `sealed`
  EXPECT_TRUE(WaitFor([&] { return Stats(*client_).ref_count == 2; }, absl::Seconds(5)));
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, WaitsOfADepartedClientAreRemoved) {
  ObjectID id = ObjectID::FromLabel("abandoned");
  ASSERT_OK_AND_ASSIGN(auto waiter, RawStoreClient::Connect(store_->socket_path(), "waiter"));
  ASSERT_OK(waiter->Send(GetRequest{{id}, -1}));
  ASSERT_OK(waiter->Send(GetRequest{{id}, 60000}));
  EXPECT_TRUE(WaitFor([&] { return Stats(*client_).waiting_gets == 2; }, absl::Seconds(5)));
  waiter.reset();
  EXPECT_TRUE(WaitFor([&] { return Stats(*client_).waiting_gets == 0; }, absl::Seconds(5)));
  CreateSealed(*client_, id);
  EXPECT_EQ(Stats(*client_).ref_count, 1u);  // only the creator's
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, DepartingClientLosesItsReferencesAndUnsealedObjects) {
  ObjectID kept = ObjectID::FromLabel("kept");
  ObjectID draft = ObjectID::FromLabel("draft");
  CreateSealed(*client_, kept);
  ASSERT_OK_AND_ASSIGN(auto other, RawStoreClient::Connect(store_->socket_path(), "other"));
  ASSERT_OK_AND_ASSIGN(Reply r, other->Call(GetRequest{{kept, kept}, 0}));
  ASSERT_OK_AND_ASSIGN(r, other->Call(CreateRequest{draft, 4096, 0, true}));
  ASSERT_OK(r.status());
  EXPECT_EQ(Stats(*client_).ref_count, 4u);
  other.reset();
  EXPECT_TRUE(WaitFor(
      [&] {
        StatsReply s = Stats(*client_);
        return s.ref_count == 1 && s.objects_created == 0;
      },
      absl::Seconds(5)));
  EXPECT_THAT(Codes(*client_, ContainsRequest{{kept, draft}}), ElementsAre(ErrorCode::kOk, ErrorCode::kObjectNotFound));
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, ListPagesThroughEveryObjectInIdOrder) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 25; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("list-", i)));
    CreateSealed(*client_, ids.back(), 64);
  }
  std::sort(ids.begin(), ids.end());
  std::vector<ObjectID> seen;
  std::optional<ObjectID> cursor;
  for (bool more = true; more;) {
    ASSERT_OK_AND_ASSIGN(Reply r, client_->Call(ListRequest{cursor, 10}));
    const ObjectsReply& page = BodyOf<ObjectsReply>(r);
    for (const ObjectInfo& o : page.objects) seen.push_back(o.id);
    ASSERT_FALSE(page.objects.empty());
    cursor = page.objects.back().id;
    more = page.more;
  }
  EXPECT_EQ(seen, ids);
  EXPECT_THAT(Codes(*client_, ReleaseRequest{ids}), ::testing::Each(ErrorCode::kOk));
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, EvictFreesUnreferencedObjectsOldestFirst) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("evict-", i)));
    CreateSealed(*client_, ids.back(), 4096);
    EXPECT_THAT(Codes(*client_, ReleaseRequest{{ids.back()}}), ElementsAre(ErrorCode::kOk));
  }
  ASSERT_OK_AND_ASSIGN(Reply r, client_->Call(GetRequest{{ids[0]}, 0}));  // ids[0] pinned
  ASSERT_OK_AND_ASSIGN(r, client_->Call(EvictRequest{8192}));
  EXPECT_EQ(BodyOf<EvictReply>(r).objects_evicted, 2u);
  EXPECT_EQ(BodyOf<EvictReply>(r).bytes_evicted, 8192u);
  EXPECT_THAT(Codes(*client_, ContainsRequest{ids}),
              ElementsAre(ErrorCode::kOk, ErrorCode::kObjectNotFound, ErrorCode::kObjectNotFound, ErrorCode::kOk));
  StatsReply s = Stats(*client_);
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(s.evicted_bytes, 8192u);
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, CreateEvictsWhenTheArenaIsFull) {
  StoreProcessOptions small;
  small.memory = 1 << 20;
  StartStore(small);
  std::vector<ObjectID> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("full-", i)));
    CreateSealed(*client_, ids.back(), 256 << 10);
    EXPECT_THAT(Codes(*client_, ReleaseRequest{{ids.back()}}), ElementsAre(ErrorCode::kOk));
  }
  ObjectID big = ObjectID::FromLabel("big");
  ASSERT_OK_AND_ASSIGN(Reply r, client_->Call(CreateRequest{big, 256 << 10, 0, false}));
  EXPECT_THAT(r.status(), HasErrorCode(ErrorCode::kOutOfMemory));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(CreateRequest{big, 300 << 10, 0, true}));
  ASSERT_OK(r.status());
  EXPECT_THAT(Codes(*client_, ContainsRequest{ids}),
              ElementsAre(ErrorCode::kObjectNotFound, ErrorCode::kObjectNotFound, ErrorCode::kOk, ErrorCode::kOk));
  ASSERT_OK_AND_ASSIGN(r, client_->Call(AbortRequest{big}));
  ASSERT_OK(r.status());
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, SigtermShutsDownCleanlyAndRemovesTheSocket) {
  ASSERT_OK_AND_ASSIGN(int status, store_->Stop());
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  struct stat st {};
  EXPECT_NE(::lstat(store_->socket_path().c_str(), &st), 0);
}

TEST_F(StoreProtocolTest, SecondStoreOnALiveSocketRefusesToStart) {
  StoreProcessOptions options;
  options.extra_args = {"--socket", store_->socket_path()};  // the last --socket wins
  absl::StatusOr<std::unique_ptr<StoreProcess>> second = StoreProcess::Start(options);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()), ::testing::HasSubstr("in use by another running store"));
  // The first store still serves (the second's probe connection goes away).
  EXPECT_TRUE(WaitFor([&] { return Stats(*client_).clients == 1; }, absl::Seconds(5)));
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, HugepagesDirectoryMustBeAHugetlbfsMount) {
  StoreProcessOptions options;
  options.extra_args = {"--hugepages", store_->dir()};
  absl::StatusOr<std::unique_ptr<StoreProcess>> other = StoreProcess::Start(options);
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()), ::testing::HasSubstr("not a hugetlbfs mount"));
  ExpectNoLeaks();
}

TEST_F(StoreProtocolTest, ArenaOnHugePagesServesObjects) {
  const uint64_t page_kb = DefaultHugepageKb();
  if (page_kb == 0) RPLASMA_SKIP_TEST("hugepages", "this kernel has no huge pages (no Hugepagesize in /proc/meminfo)");
  HugePageReservation huge(page_kb, 2);
  if (!huge.ok()) RPLASMA_SKIP_TEST("hugepages", huge.why());
  StoreProcessOptions options;
  options.memory = 2 * page_kb << 10;
  options.extra_args = {"--hugepages", "on"};
  StartStore(options);
  EXPECT_EQ(client_->connect_reply().arena_size, 2 * page_kb << 10);
  ObjectID id = ObjectID::FromLabel("huge");
  CreateSealed(*client_, id);
  EXPECT_THAT(Codes(*client_, ContainsRequest{{id}}), ElementsAre(ErrorCode::kOk));
  EXPECT_THAT(Codes(*client_, ReleaseRequest{{id}}), ElementsAre(ErrorCode::kOk));
  ExpectNoLeaks();
  ASSERT_OK(store_->StopCleanly());  // the huge pages go back before the reservation does
}

TEST_F(StoreProtocolTest, HugePageArenaCannotBeResizedByAClientAndKeepsServing) {
  constexpr uint64_t kPageKb = 2048;
  HugePageReservation huge(kPageKb, 2);
  if (!huge.ok()) RPLASMA_SKIP_TEST("hugepages", huge.why());
  StoreProcessOptions options;
  options.memory = 4 << 20;
  options.extra_args = {"--hugepages", "2M"};
  StartStore(options);
  const uint64_t arena = client_->connect_reply().arena_size;
  ASSERT_EQ(arena, 4u << 20);
  const int fd = client_->arena_fd();
  constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  EXPECT_EQ(::fcntl(fd, F_GET_SEALS) & kSeals, kSeals);
  errno = 0;
  EXPECT_NE(::ftruncate(fd, 0), 0);
  EXPECT_EQ(errno, EPERM);
  errno = 0;
  EXPECT_NE(::ftruncate(fd, static_cast<off_t>(arena / 2)), 0);
  EXPECT_EQ(errno, EPERM);
  errno = 0;
  EXPECT_NE(::ftruncate(fd, static_cast<off_t>(arena * 2)), 0);
  EXPECT_EQ(errno, EPERM);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), arena);

  // The store still serves Puts across the whole arena (a shrunk file would SIGBUS it here)...
  std::vector<uint8_t> bytes(kMaxInlinePutBytes);
  std::vector<ObjectID> ids;
  for (int i = 0; i < 48; ++i) {  // 3 MiB: both huge pages written
    std::fill(bytes.begin(), bytes.end(), static_cast<uint8_t>(i));
    ids.push_back(ObjectID::FromLabel(absl::StrCat("huge-put-", i)));
    ASSERT_OK_AND_ASSIGN(Reply put, client_->Call(PutRequest{ids.back(), bytes, {}, 0, false}));
    ASSERT_OK(put.status()) << "put " << i;
  }
  // ...and new clients, which map the arena and read what was put.
  ASSERT_OK_AND_ASSIGN(auto reader, RawStoreClient::Connect(store_->socket_path(), "reader"));
  void* base = ::mmap(nullptr, arena, PROT_READ, MAP_SHARED, reader->arena_fd(), 0);
  ASSERT_NE(base, MAP_FAILED);
  ASSERT_OK_AND_ASSIGN(Reply got, reader->Call(GetRequest{{ids.back()}, 0}));
  const ObjectsReply& objects = BodyOf<ObjectsReply>(got);
  ASSERT_EQ(objects.objects.size(), 1u);
  ASSERT_EQ(objects.objects[0].error, ErrorCode::kOk);
  const uint8_t* object = static_cast<const uint8_t*>(base) + objects.objects[0].offset;
  EXPECT_EQ(object[0], 47);
  EXPECT_EQ(object[kMaxInlinePutBytes - 1], 47);
  EXPECT_THAT(Codes(*reader, ReleaseRequest{{ids.back()}}), ElementsAre(ErrorCode::kOk));
  ::munmap(base, arena);
  reader.reset();
  EXPECT_THAT(store_->ReadLog(), ::testing::Not(::testing::HasSubstr("SIGBUS")));
  ExpectNoLeaks();
  ASSERT_OK(store_->StopCleanly());  // the huge pages go back before the reservation does
}

TEST_F(StoreProtocolTest, SocketIsPrivateToTheStoresUser) {
  struct stat st {};
  ASSERT_EQ(::stat(store_->socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string dir = store_->socket_path().substr(0, store_->socket_path().rfind('/'));
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace rplasma
