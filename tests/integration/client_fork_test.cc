// A Client inherited across fork(): the child must not touch the parent's connection or slots.
// Real processes: the store, this test (the parent) and its forked child. The child checks with
// plain code and reports through its exit status (gtest belongs to the parent).
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "client/fork_guard.h"
#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

class ClientForkTest : public ClientStoreTest {};

// In the child: 0 if every check held, else the number of the first that failed.
int ChildChecks(Client& reader, Client& socket_reader, ObjectBuffer& held_by_slot, ObjectBuffer& held_by_socket,
                const ObjectID& x, const std::string& store_socket) {
  auto refused = [](const absl::Status& s) {
    return ErrorCodeOf(s) == ErrorCode::kInvalidArgument && s.message().find("fork") != absl::string_view::npos;
  };
  if (!refused(reader.GetOne(x).status())) return 1;
  if (!refused(reader.Release(x))) return 2;
  if (!refused(socket_reader.Put(ObjectID::FromLabel("from the child"), std::vector<uint8_t>(10, 1)))) return 3;
  if (!refused(reader.Stats().status())) return 4;
  // The inherited buffers go: neither may give back the parent's references.
  held_by_slot = ObjectBuffer();
  held_by_socket = ObjectBuffer();
  // A client of its own works.
  ClientOptions options;
  options.store_socket = store_socket;
  options.client_name = "child";
  absl::StatusOr<std::unique_ptr<Client>> own = Client::Connect(options);
  if (!own.ok()) return 5;
  absl::StatusOr<ObjectBuffer> mine = (*own)->GetOne(x);
  if (!mine.ok() || mine->data().size() != 3000 || mine->data()[0] != TestBytes<std::vector<uint8_t>>(1, 3000)[0])
    return 6;
  return 0;
}

TEST_F(ClientForkTest, AChildRefusesToUseItsParentsClientAndNeverDropsTheParentsReferences) {
  ASSERT_NO_FATAL_FAILURE(StartStore());
  const ObjectID x = ObjectID::FromLabel("fork x");
  const ObjectID y = ObjectID::FromLabel("fork y");
  ASSERT_OK(client_->Put(x, AsSpan(TestBytes<std::vector<uint8_t>>(1, 3000))));
  ASSERT_OK(client_->Put(y, AsSpan(TestBytes<std::vector<uint8_t>>(2, 3000))));
  std::unique_ptr<Client> reader = Connect("reader");
  std::unique_ptr<Client> socket_reader = Connect("socket reader", /*without_ipc=*/false);
  ASSERT_OK_AND_ASSIGN(ObjectBuffer bx, reader->GetOne(x));
  ASSERT_OK_AND_ASSIGN(ObjectBuffer by, socket_reader->GetOne(y));
  ASSERT_OK_AND_ASSIGN(StatsReply before, client_->Stats());
  ASSERT_EQ(before.slot_references, 1u);
  ASSERT_EQ(before.ref_count, 2u);

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(ChildChecks(*reader, *socket_reader, bx, by, x, store_->socket_path()));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's check that failed";

  // The parent's references are all still there, and its client still works.
  ASSERT_OK_AND_ASSIGN(StatsReply after, client_->Stats());
  EXPECT_EQ(after.slot_references, 1u);
  EXPECT_EQ(after.ref_count, 2u);
  EXPECT_EQ(std::vector<uint8_t>(bx.data().begin(), bx.data().end()), TestBytes<std::vector<uint8_t>>(1, 3000));
  ASSERT_OK(reader->Release(x));
  bx = ObjectBuffer();
  by = ObjectBuffer();
  EXPECT_TRUE(WaitForStats([](const StatsReply& s) { return s.ref_count == 0; }));
  ASSERT_OK(client_->Delete({x, y}));
  reader.reset();
  socket_reader.reset();
  ExpectBackAtBaseline();
}

TEST(ForkGuardTest, AGuardMadeInTheParentSeesTheForkAndOneMadeInTheChildDoesNot) {
  const ForkGuard parent;
  EXPECT_FALSE(parent.forked());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const ForkGuard own;
    ::_exit(parent.forked() && !own.forked() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(parent.forked());
}

}  // namespace
}  // namespace rplasma::testing
