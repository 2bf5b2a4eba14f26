// DefaultSocketDir: where the store, the manager and the CLI look when no flag names a socket.
#include "protocol/command_line/default_socket.h"

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

namespace rplasma {
namespace {

TEST(DefaultSocketTest, RootUsesRunRplasmaWhateverTheEnvironmentSays) {
  EXPECT_EQ(DefaultSocketDir(0, nullptr), "/run/rplasma");
  EXPECT_EQ(DefaultSocketDir(0, "/run/user/0"), "/run/rplasma");
}

TEST(DefaultSocketTest, OtherUsersUseTheirRuntimeDir) {
  EXPECT_EQ(DefaultSocketDir(1000, "/run/user/1000"), "/run/user/1000/rplasma");
}

TEST(DefaultSocketTest, WithoutAUsableRuntimeDirAPerUidDirectoryUnderTmp) {
  EXPECT_EQ(DefaultSocketDir(1000, nullptr), "/tmp/rplasma-1000");
  EXPECT_EQ(DefaultSocketDir(1000, ""), "/tmp/rplasma-1000");
  EXPECT_EQ(DefaultSocketDir(1000, "relative/dir"), "/tmp/rplasma-1000");
}

TEST(DefaultSocketTest, StoreAndManagerSocketsShareTheDirectory) {
  const std::string dir = DefaultSocketDir();
  EXPECT_EQ(dir, DefaultSocketDir(::geteuid(), std::getenv("XDG_RUNTIME_DIR")));
  EXPECT_EQ(DefaultStoreSocket(), dir + "/store.sock");
  EXPECT_EQ(DefaultManagerSocket(), dir + "/manager.sock");
}

}  // namespace
}  // namespace rplasma
