// chaos_worker: one client of the chaos test (tests/chaos/chaos_test.cc), a process the killer may
// SIGKILL at any instant. It loops until SIGTERM over a checksummed workload on its node:
//   put      a new object whose size and bytes are a function of its id (ContentOf), so any reader
//            on any node can check every byte without a shared table; its id is then appended to
//            <ids_dir>/<slot>.ids for the other workers;
//   get      one of its own recent objects from the local store;
//   remote   an id another node's worker put: Get with remote fallback (the manager fetches it);
//   delete   one of its own recent objects.
// A get that returns bytes other than ContentOf(id) is a MISMATCH; any call that takes longer than
// twice its deadline is STUCK. Both are printed at once ("chaos-worker: MISMATCH ...") so a kill
// right after cannot hide them. Absent objects, dead stores and managers and Redis restarts are
// expected: those calls fail with a status and the worker reconnects. Counters go to <stats> as
// one JSON object, rewritten every second and at exit.
//
//   chaos_worker STORE_SOCKET MANAGER_SOCKET IDS_DIR SLOT STATS_PATH SEED
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "client/client.h"
#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "tests/chaos/chaos_content.h"

namespace rplasma::chaos {
namespace {

std::atomic<bool> g_stop{false};
void OnTerm(int) { g_stop.store(true); }

// A remote get waits this long for the fetch; every call has this as its deadline.
constexpr absl::Duration kDeadline = absl::Seconds(3);
constexpr size_t kRecent = 256;  // own ids kept for local gets and deletes

struct Counters {
  std::map<std::string, uint64_t> n;  // "put_ok", "remote_failed", "mismatches", ...
  std::string Json() const {
    std::string out = "{";
    for (const auto& [name, value] : n) absl::StrAppend(&out, out.size() > 1 ? "," : "", "\"", name, "\":", value);
    return out + "}";
  }
};

class Worker {
 public:
  Worker(char** argv)
      : store_socket_(argv[1]), manager_socket_(argv[2]), ids_dir_(argv[3]), slot_(argv[4]), stats_path_(argv[5]) {
    uint64_t seed = 0;
    (void)absl::SimpleAtoi(argv[6], &seed);
    rng_.seed(seed);
    counters_.n = {{"put_ok", 0}, {"get_ok", 0}, {"remote_ok", 0}, {"delete_ok", 0}, {"mismatches", 0}, {"stuck", 0}};
  }

  int Run() {
    absl::Time next_stats = absl::Now();
    while (!g_stop.load()) {
      if (client_ == nullptr && !Reconnect()) continue;
      const int dice = static_cast<int>(rng_() % 100);
      if (dice < 30 || recent_.empty()) {
        Timed("put", [&] { return Put(); });
      } else if (dice < 50) {
        Timed("get", [&] { return GetOwn(); });
      } else if (dice < 92) {
        Timed("remote", [&] { return GetRemote(); });
      } else {
        Timed("delete", [&] { return DeleteOwn(); });
      }
      if (absl::Now() >= next_stats) {
        WriteStats();
        next_stats = absl::Now() + absl::Seconds(1);
      }
    }
    client_.reset();  // releases every reference before the final count
    WriteStats();
    return 0;
  }

 private:
  bool Reconnect() {
    ClientOptions options;
    options.store_socket = store_socket_;
    options.manager_socket = manager_socket_;
    options.client_name = "chaos " + slot_;
    options.get_fetches_remote = true;
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
    if (!client.ok()) {
      ++counters_.n["connect_failed"];
      absl::SleepFor(absl::Milliseconds(100));
      return false;
    }
    ++counters_.n["connects"];
    client_ = *std::move(client);
    return true;
  }

  // Runs one operation; counts it by outcome; flags it if it overran twice its deadline. A lost
  // store connection (Unavailable) drops the client so the next operation reconnects.
  template <typename Op>
  void Timed(const std::string& name, Op op) {
    const absl::Time start = absl::Now();
    absl::Status status = op();
    const absl::Duration took = absl::Now() - start;
    if (took > 2 * kDeadline) {
      ++counters_.n["stuck"];
      Report(absl::StrCat("STUCK op=", name, " took=", absl::FormatDuration(took), " status=", status.ToString()));
    }
    if (status.ok()) {
      ++counters_.n[name + "_ok"];
      return;
    }
    ++counters_.n[absl::StrCat(name, "_", ErrorCodeName(ErrorCodeOf(status)))];
    if (ErrorCodeOf(status) == ErrorCode::kUnavailable || ErrorCodeOf(status) == ErrorCode::kProtocolError) {
      client_.reset();
    }
  }

  absl::Status Put() {
    const ObjectID id = ObjectID::Random();
    const std::string bytes = ContentOf(id);
    RETURN_IF_ERROR(client_->Put(id, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
    recent_.push_back(id);
    if (recent_.size() > kRecent) recent_.pop_front();
    const std::string line = id.Hex() + "\n";
    const int fd = ::open((ids_dir_ + "/" + slot_ + ".ids").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      (void)!::write(fd, line.data(), line.size());  // one append: readers never see half a line
      ::close(fd);
    }
    return absl::OkStatus();
  }

  absl::Status GetOwn() { return GetAndCheck(recent_[rng_() % recent_.size()]); }

  absl::Status GetRemote() {
    std::vector<ObjectID> others = OthersIds();
    if (others.empty()) return absl::OkStatus();
    return GetAndCheck(others[rng_() % others.size()]);
  }

  absl::Status DeleteOwn() {
    const size_t at = rng_() % recent_.size();
    const ObjectID id = recent_[at];
    recent_.erase(recent_.begin() + static_cast<std::ptrdiff_t>(at));
    return client_->Delete({&id, 1});
  }

  absl::Status GetAndCheck(const ObjectID& id) {
    ASSIGN_OR_RETURN(ObjectBuffer buffer, client_->GetOne(id, kDeadline));
    const std::string expected = ContentOf(id);
    const absl::Span<const uint8_t> data = buffer.data();
    if (data.size() != expected.size() || std::memcmp(data.data(), expected.data(), data.size()) != 0) {
      ++counters_.n["mismatches"];
      Report(absl::StrCat("MISMATCH id=", id.Hex(), " size=", data.size(), " expected=", expected.size()));
    }
    return buffer.Release();
  }

  // Recent ids of the workers of other nodes (slots are "n<node>-w<k>"), re-read once a second.
  std::vector<ObjectID> OthersIds() {
    if (absl::Now() < others_read_at_ + absl::Seconds(1)) return others_;
    others_read_at_ = absl::Now();
    others_.clear();
    const std::string node_prefix = slot_.substr(0, slot_.find('-') + 1);
    DIR* dir = ::opendir(ids_dir_.c_str());
    if (dir == nullptr) return others_;
    while (dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (!absl::EndsWith(name, ".ids") || absl::StartsWith(name, node_prefix)) continue;
      std::ifstream in(ids_dir_ + "/" + name);
      std::deque<std::string> last;
      for (std::string line; std::getline(in, line);) {
        last.push_back(line);
        if (last.size() > kRecent) last.pop_front();
      }
      for (const std::string& hex : last) {
        absl::StatusOr<ObjectID> id = ObjectID::FromHex(hex);
        if (id.ok()) others_.push_back(*id);
      }
    }
    ::closedir(dir);
    return others_;
  }

  void Report(const std::string& what) {
    std::fprintf(stderr, "chaos-worker %s: %s\n", slot_.c_str(), what.c_str());
    std::fflush(stderr);
  }

  void WriteStats() {
    const std::string tmp = stats_path_ + ".tmp";
    { std::ofstream(tmp) << counters_.Json() << "\n"; }
    ::rename(tmp.c_str(), stats_path_.c_str());
  }

  const std::string store_socket_, manager_socket_, ids_dir_, slot_, stats_path_;
  std::mt19937_64 rng_;
  std::unique_ptr<Client> client_;
  std::deque<ObjectID> recent_;
  std::vector<ObjectID> others_;
  absl::Time others_read_at_ = absl::InfinitePast();
  Counters counters_;
};

}  // namespace
}  // namespace rplasma::chaos

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: chaos_worker STORE_SOCKET MANAGER_SOCKET IDS_DIR SLOT STATS_PATH SEED\n");
    return 2;
  }
  struct sigaction action = {};
  action.sa_handler = rplasma::chaos::OnTerm;
  ::sigaction(SIGTERM, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return rplasma::chaos::Worker(argv).Run();
}
