#include "protocol/base/object_id.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(ObjectIDTest, HexRoundTrips) {
  ObjectID id = ObjectID::Random();
  ASSERT_OK_AND_ASSIGN(ObjectID back, ObjectID::FromHex(id.Hex()));
  EXPECT_EQ(id, back);
  EXPECT_EQ(id.Hex().size(), 40u);
}

TEST(ObjectIDTest, OrderIsTheBytesOrder) {
  // The word-at-a-time comparison must order ids as memcmp does, with differences in every byte
  // (the overlapping last word included), and equal ids compare equal.
  std::vector<ObjectID> ids;
  for (int i = 0; i < 200; ++i) ids.push_back(ObjectID::Random());
  for (size_t byte = 0; byte < ObjectID::kSize; ++byte) {
    ObjectID a = ids[byte];
    ObjectID b = a;
    b.mutable_data()[byte] ^= 0x80;
    ids.push_back(a);
    ids.push_back(b);
  }
  for (const ObjectID& a : ids) {
    for (const ObjectID& b : ids) {
      const int bytes = std::memcmp(a.data(), b.data(), ObjectID::kSize);
      ASSERT_EQ(a < b, bytes < 0) << a.Hex() << " " << b.Hex();
      ASSERT_EQ(a == b, bytes == 0) << a.Hex() << " " << b.Hex();
      ASSERT_EQ((a <=> b) == 0, bytes == 0) << a.Hex() << " " << b.Hex();
    }
  }
}

TEST(ObjectIDTest, MalformedHexIsRejected) {
  EXPECT_THAT(ObjectID::FromHex("abc"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ObjectID::FromHex(std::string(40, 'z')), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ObjectID::FromBinary("short"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(ObjectIDTest, LabelsAreDeterministicAndDistinct) {
  EXPECT_EQ(ObjectID::FromLabel("a"), ObjectID::FromLabel("a"));
  absl::flat_hash_set<ObjectID> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(ObjectID::FromLabel("obj-" + std::to_string(i)));
  EXPECT_EQ(seen.size(), 10000u);
}

// A forked worker draws ids from the same generator state as its parent unless the generator
// is per call or reseeded; both processes then create the same objects (ObjectExists).
TEST(ObjectIDTest, ForkedChildrenDrawDifferentIdsThanTheirParent) {
  ObjectID::Random();  // The parent's generator is in use before the fork, as in a real worker pool.
  constexpr int kChildren = 3;
  constexpr int kIdsEach = 4;
  absl::flat_hash_set<ObjectID> seen;
  for (int c = 0; c < kChildren; ++c) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      for (int i = 0; i < kIdsEach; ++i) {
        ObjectID id = ObjectID::Random();
        if (write(fds[1], id.data(), ObjectID::kSize) != static_cast<ssize_t>(ObjectID::kSize)) _exit(1);
      }
      _exit(0);
    }
    close(fds[1]);
    for (int i = 0; i < kIdsEach; ++i) {
      ObjectID id;
      ASSERT_EQ(read(fds[0], id.mutable_data(), ObjectID::kSize), static_cast<ssize_t>(ObjectID::kSize));
      seen.insert(id);
    }
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int i = 0; i < kIdsEach; ++i) seen.insert(ObjectID::Random());
  EXPECT_EQ(seen.size(), static_cast<size_t>((kChildren + 1) * kIdsEach));
}

}  // namespace
}  // namespace rplasma
