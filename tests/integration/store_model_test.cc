// A randomized model of the store's object state machine, against a real rplasma-store.
//
// Three clients — two getting through the shared index, one through the socket only — and forked
// children that crash do random creates, writes, seals, aborts, gets, releases, deletes, evictions
// and disconnects against a small arena. After every step the store is checked against a plain
// model: which objects exist and in which state (List), how many references each has, socket and
// slot together (List's ref_count, Stats' ref_count), and the bytes of every object a client holds.
// The model cannot know which unreferenced objects an eviction picks; it accepts the disappearance
// of exactly those (sealed, unreferenced, not being deleted), and nothing else.
//
// RPLASMA_MODEL_SEED replays a run (the seed is printed first); RPLASMA_MODEL_SECONDS sets its
// length (default 20 s: the CI budget; scripts/model.sh runs it with fresh seeds for as long as asked).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/checksum.h"
#include "tests/integration/client_test_fixture.h"

namespace rplasma::testing {
namespace {

constexpr int kIds = 24;
constexpr uint64_t kMaxObjectBytes = 48 << 10;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

struct ModelObject {
  bool sealed = false;
  int creator = -1;
  uint64_t size = 0;
  uint64_t seed = 0;
  int refs = 0;                 // every client's, socket and slot
  bool delete_pending = false;  // deleted while referenced: invisible, freed at the last release
};

struct Held {
  ObjectID id;
  uint64_t seed = 0;  // of the version the buffer holds (the id may be re-created since)
  ObjectBuffer buffer;
};

struct Actor {
  std::unique_ptr<Client> client;
  std::vector<Held> held;
  std::map<ObjectID, CreatedObject> creating;  // created by this actor, not sealed yet
};

class StoreModelTest : public ClientStoreTest {
 protected:
  std::unique_ptr<Client> NewActorClient(int i) { return Connect(absl::StrCat("actor-", i), /*without_ipc=*/i != 2); }

  // The store against the model: fails the test (and says why) on the first difference.
  void Check(const std::string& step) {
    ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, client_->List());
    std::map<ObjectID, ObjectInfo> seen;
    for (const ObjectInfo& o : listed) seen[o.id] = o;
    // Evictions the model could not predict: only unreferenced sealed objects may vanish.
    for (auto it = model_.begin(); it != model_.end();) {
      const ModelObject& m = it->second;
      if (!m.delete_pending && !seen.contains(it->first)) {
        ASSERT_TRUE(m.sealed && m.refs == 0)
            << step << ": " << it->first.Hex() << " vanished with " << m.refs << " references, sealed " << m.sealed;
        it = model_.erase(it);
        continue;
      }
      ++it;
    }
    int total_refs = 0;
    for (const auto& [id, m] : model_) {
      total_refs += m.refs;
      if (m.delete_pending) {
        EXPECT_FALSE(seen.contains(id)) << step << ": a deleted object is listed";
        continue;
      }
      const ObjectInfo& o = seen.at(id);
      ASSERT_EQ(o.state == ObjectState::kSealed, m.sealed) << step << ": " << id.Hex();
      ASSERT_EQ(o.data_size, m.size) << step << ": " << id.Hex();
      ASSERT_EQ(o.ref_count, m.refs) << step << ": references of " << id.Hex();
    }
    for (const auto& [id, o] : seen) ASSERT_TRUE(model_.contains(id)) << step << ": unknown object " << id.Hex();
    ASSERT_OK_AND_ASSIGN(StatsReply stats, client_->Stats());
    ASSERT_EQ(stats.ref_count, static_cast<uint64_t>(total_refs)) << step;
    // Every byte a client holds is the object's.
    for (const Actor& a : actors_) {
      for (const Held& h : a.held) {
        ASSERT_EQ(std::vector<uint8_t>(h.buffer.data().begin(), h.buffer.data().end()),
                  TestBytes<std::vector<uint8_t>>(h.seed, h.buffer.data().size()))
            << step << ": bytes of " << h.id.Hex();
      }
    }
  }

  // The step's operations. Each predicts the store's answer from the model and updates it.
  void Create(Actor& a, int who, const ObjectID& id) {
    const uint64_t size = 1 + rng_() % kMaxObjectBytes;
    absl::StatusOr<CreatedObject> created = a.client->Create(id, size, {});
    if (model_.contains(id)) {
      ASSERT_EQ(ErrorCodeOf(created.status()), ErrorCode::kObjectExists) << id.Hex();
      return;
    }
    if (!created.ok()) {
      ASSERT_EQ(ErrorCodeOf(created.status()), ErrorCode::kOutOfMemory) << created.status();
      return;
    }
    const uint64_t seed = next_seed_++;
    const std::vector<uint8_t> bytes = TestBytes<std::vector<uint8_t>>(seed, size);
    std::memcpy(created->data.data(), bytes.data(), size);
    model_[id] = ModelObject{false, who, size, seed, 1, false};
    a.creating.emplace(id, *created);
  }
  void Seal(Actor& a) {
    if (a.creating.empty()) return;
    auto it = a.creating.begin();
    std::advance(it, static_cast<long>(rng_() % a.creating.size()));
    const ObjectID id = it->first;
    ASSERT_OK(a.client->SealAndRelease(id, ObjectChecksum(it->second.data, it->second.metadata)));
    a.creating.erase(it);
    ModelObject& m = model_.at(id);
    m.sealed = true;
    --m.refs;
  }
  void Abort(Actor& a) {
    if (a.creating.empty()) return;
    auto it = a.creating.begin();
    std::advance(it, static_cast<long>(rng_() % a.creating.size()));
    ASSERT_OK(a.client->Abort(it->first));
    model_.erase(it->first);
    a.creating.erase(it);
  }
  void Get(Actor& a, const ObjectID& id) {
    absl::StatusOr<std::vector<ObjectBuffer>> got = a.client->Get({&id, 1});
    ASSERT_OK(got.status());
    ObjectBuffer& buffer = (*got)[0];
    auto it = model_.find(id);
    const bool gettable = it != model_.end() && it->second.sealed && !it->second.delete_pending;
    if (!gettable) {
      ASSERT_FALSE(buffer.valid()) << "got " << id.Hex() << ", which the model says is not sealed and visible";
      return;
    }
    ASSERT_TRUE(buffer.valid()) << id.Hex() << ": " << buffer.status();
    ASSERT_EQ(buffer.data().size(), it->second.size);
    ++it->second.refs;
    a.held.push_back(Held{id, it->second.seed, std::move(buffer)});
  }
  void Release(Actor& a) {
    if (a.held.empty()) return;
    const size_t k = rng_() % a.held.size();
    const ObjectID id = a.held[k].id;
    a.held.erase(a.held.begin() + static_cast<long>(k));  // the buffer gives its reference back
    // A socket reference goes back with no reply: a round trip on the same connection orders it
    // before the check's requests on another.
    ASSERT_OK(a.client->Stats().status());
    ReleasedOne(id);
  }
  void ReleasedOne(const ObjectID& id) {
    ModelObject& m = model_.at(id);
    --m.refs;
    if (m.delete_pending && m.refs == 0) model_.erase(id);
  }
  void Delete(Actor& a, const ObjectID& id) {
    absl::Status deleted = a.client->Delete({&id, 1});
    auto it = model_.find(id);
    if (it == model_.end() || it->second.delete_pending) {
      ASSERT_EQ(ErrorCodeOf(deleted), ErrorCode::kObjectNotFound) << deleted;
      return;
    }
    if (!it->second.sealed) {
      ASSERT_EQ(ErrorCodeOf(deleted), ErrorCode::kObjectNotSealed) << deleted;
      return;
    }
    ASSERT_OK(deleted);
    if (it->second.refs == 0) {
      model_.erase(it);
    } else {
      it->second.delete_pending = true;
    }
  }
  void Evict(Actor& a) { ASSERT_OK(a.client->Evict(1 + rng_() % (256 << 10)).status()); }
  void Disconnect(Actor& a, int who) {
    std::vector<ObjectID> released;
    for (const Held& h : a.held) released.push_back(h.id);
    a.held.clear();
    for (const auto& [id, created] : a.creating) model_.erase(id);  // aborted by the store
    a.creating.clear();
    a.client.reset();
    for (const ObjectID& id : released) ReleasedOne(id);
    a.client = NewActorClient(who);
    ASSERT_NE(a.client, nullptr);
    // The store handles the close before the new client's first request only if it read it first:
    // wait until it counts the connection gone.
    ASSERT_TRUE(WaitForStats([&](const StatsReply& s) { return s.clients == actors_.size() + 1; }));
  }
  // A child process connects, takes references and creates an object, and dies holding them.
  void Crash() {
    std::vector<ObjectID> sealed;
    for (const auto& [id, m] : model_) {
      if (m.sealed && !m.delete_pending) sealed.push_back(id);
    }
    const ObjectID doomed = ObjectID::FromLabel(absl::StrCat("crash-", crashes_++));
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::unique_ptr<Client> own = Connect("crasher");
      if (own == nullptr) ::_exit(2);
      std::vector<ObjectBuffer> kept;
      for (size_t i = 0; i < sealed.size() && i < 3; ++i) {
        absl::StatusOr<ObjectBuffer> b = own->GetOne(sealed[i]);
        if (b.ok()) kept.push_back(*std::move(b));
      }
      (void)own->Create(doomed, 1000, {});
      ::_exit(0);  // no release, no abort: the store finds the connection gone
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(WaitForStats([&](const StatsReply& s) { return s.clients == actors_.size() + 1; }));
  }

  std::map<ObjectID, ModelObject> model_;
  std::vector<Actor> actors_;
  std::mt19937_64 rng_;
  uint64_t next_seed_ = 1;
  int crashes_ = 0;
};

TEST_F(StoreModelTest, RandomOperationsOfSeveralClientsMatchTheModelAfterEveryStep) {
  const uint64_t seed = EnvOr("RPLASMA_MODEL_SEED", std::random_device{}());
  const absl::Duration budget = absl::Seconds(static_cast<int64_t>(EnvOr("RPLASMA_MODEL_SECONDS", 20)));
  std::cout << "store model: seed " << seed << " (RPLASMA_MODEL_SEED replays it), " << absl::FormatDuration(budget)
            << std::endl;
  rng_.seed(seed);
  ASSERT_NO_FATAL_FAILURE(StartStore(1 << 20));
  for (int i = 0; i < 3; ++i) actors_.push_back(Actor{NewActorClient(i), {}, {}});
  std::vector<ObjectID> ids;
  for (int i = 0; i < kIds; ++i) ids.push_back(ObjectID::FromLabel(absl::StrCat("model-", i)));
  std::map<std::string, int> counts;
  const absl::Time end = absl::Now() + budget;
  int64_t steps = 0;
  while (absl::Now() < end && !HasFatalFailure() && !HasNonfatalFailure()) {
    const int who = static_cast<int>(rng_() % actors_.size());
    Actor& a = actors_[who];
    const ObjectID& id = ids[rng_() % ids.size()];
    const int op = static_cast<int>(rng_() % 100);
    std::string name;
    if (op < 22) {
      name = "create";
      Create(a, who, id);
    } else if (op < 40) {
      name = "seal";
      Seal(a);
    } else if (op < 44) {
      name = "abort";
      Abort(a);
    } else if (op < 66) {
      name = "get";
      Get(a, id);
    } else if (op < 82) {
      name = "release";
      Release(a);
    } else if (op < 91) {
      name = "delete";
      Delete(a, id);
    } else if (op < 95) {
      name = "evict";
      Evict(a);
    } else if (op < 98) {
      name = "disconnect";
      Disconnect(a, who);
    } else {
      name = "crash";
      Crash();
    }
    ++counts[name];
    ++steps;
    Check(absl::StrCat("step ", steps, " (", name, " by actor ", who, ", seed ", seed, ")"));
  }
  std::cout << "store model: " << steps << " steps:";
  for (const auto& [name, n] : counts) std::cout << " " << name << " " << n;
  std::cout << std::endl;
  for (Actor& a : actors_) {
    a.held.clear();
    for (const auto& [id, created] : a.creating) ASSERT_OK(a.client->Abort(id));
    a.creating.clear();
  }
  std::vector<ObjectID> left;
  for (const auto& [id, m] : model_) {
    if (!m.delete_pending && m.sealed) left.push_back(id);
  }
  if (!left.empty()) {
    ASSERT_OK(client_->Delete(left));
  }
  actors_.clear();
  ExpectBackAtBaseline(absl::Seconds(10));
}

}  // namespace
}  // namespace rplasma::testing
