// shm_torture_worker: one process of the cross-process torture run of gets with no IPC (issue 13;
// tests/integration/shm_torture_test.cc). Several of them share one rplasma-store with a small
// arena, so that blocks are freed and reused all the time:
//
//   shm_torture_worker writer SOCKET SECONDS SEED IDS   over ids torture-0..IDS-1: put (inline) or
//       create + write + seal new versions, delete, evict and abort, for SECONDS
//   shm_torture_worker reader SOCKET SECONDS SEED IDS   get random ids (through its slots, and a
//       quarter of them through a second, socket-only client), verify, hold up to 50 for a few ms,
//       verify again, release, for SECONDS
//
// Every object the writer makes says what it is: its data opens with a header (magic, id number,
// the writer's version number, sizes), then bytes generated from (id number, version); objects with
// metadata carry the version there too. A reader checks the bytes against the store's checksum
// and against that pattern when it gets an object, and once more just before it releases it: a
// block freed while a reader held it, and reused for another object or another version, fails the
// second check (changed_while_held).
//
// Prints one JSON line of counts on stdout. Exit status: 0 if every check passed, 1 on a mismatch
// or an unexpected error (details on stderr), 2 on bad usage.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "client/checksum.h"
#include "client/client.h"
#include "nlohmann/json.hpp"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

constexpr uint64_t kMagic = 0x3165727574726f54;  // "Torture1"
constexpr size_t kHeaderWords = 5;               // magic, id number, version, data size, metadata size
constexpr size_t kHeaderBytes = kHeaderWords * sizeof(uint64_t);
constexpr size_t kMetadataBytes = 2 * sizeof(uint64_t);  // version, ~id number
constexpr size_t kMaxHeld = 50;
constexpr int kMaxReportedMismatches = 20;

ObjectID TortureId(uint64_t number) { return ObjectID::FromLabel(absl::StrCat("torture-", number)); }

uint64_t LoadWord(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
void StoreWord(uint8_t* p, uint64_t v) { std::memcpy(p, &v, sizeof(v)); }

// The generator of the bytes after the header: xorshift64 seeded by (id number, version), one
// 64-bit word per 8 bytes (the last word cut short).
class PatternGenerator {
 public:
  PatternGenerator(uint64_t number, uint64_t version)
      : x_((number + 1) * 0x9e3779b97f4a7c15ull ^ (version + 1) * 0xc2b2ae3d27d4eb4full) {
    if (x_ == 0) x_ = 1;
  }
  uint64_t Next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return x_;
  }

 private:
  uint64_t x_;
};

// Writes the data of (number, version): the header, then the pattern.
void FillData(uint64_t number, uint64_t version, absl::Span<uint8_t> data, uint64_t metadata_size) {
  const uint64_t header[kHeaderWords] = {kMagic, number, version, data.size(), metadata_size};
  for (size_t i = 0; i < kHeaderWords; ++i) StoreWord(data.data() + i * 8, header[i]);
  PatternGenerator gen(number, version);
  size_t i = kHeaderBytes;
  for (; i + 8 <= data.size(); i += 8) StoreWord(data.data() + i, gen.Next());
  if (i < data.size()) {
    const uint64_t last = gen.Next();
    std::memcpy(data.data() + i, &last, data.size() - i);
  }
}

// The metadata of (number, version), for the objects that have some.
void FillMetadata(uint64_t number, uint64_t version, uint8_t (&metadata)[kMetadataBytes]) {
  StoreWord(metadata, version);
  StoreWord(metadata + 8, ~number);
}

// What a reader saw when it checked a buffer: "" if the bytes are the object's, else why not.
// `version` is set from the header when it could be read.
std::string CheckObject(uint64_t number, const ObjectBuffer& buffer, uint64_t* version) {
  const absl::Span<const uint8_t> data = buffer.data();
  const absl::Span<const uint8_t> metadata = buffer.metadata();
  if (ObjectChecksum(data, metadata) != buffer.info().checksum) return "checksum differs from the sealed one";
  if (data.size() < kHeaderBytes) return absl::StrCat("data of ", data.size(), " bytes has no header");
  if (LoadWord(data.data()) != kMagic) return "no header magic";
  *version = LoadWord(data.data() + 16);
  if (LoadWord(data.data() + 8) != number) return absl::StrCat("header of id number ", LoadWord(data.data() + 8));
  if (LoadWord(data.data() + 24) != data.size() || LoadWord(data.data() + 32) != metadata.size()) {
    return "header sizes differ from the object's";
  }
  if (metadata.size() == kMetadataBytes &&
      (LoadWord(metadata.data()) != *version || LoadWord(metadata.data() + 8) != ~number)) {
    return "metadata of another version or id";
  }
  PatternGenerator gen(number, *version);
  size_t i = kHeaderBytes;
  for (; i + 8 <= data.size(); i += 8) {
    if (LoadWord(data.data() + i) != gen.Next()) return absl::StrCat("pattern differs at byte ", i);
  }
  if (i < data.size()) {
    const uint64_t last = gen.Next();
    if (std::memcmp(data.data() + i, &last, data.size() - i) != 0) return absl::StrCat("pattern differs at byte ", i);
  }
  return "";
}

absl::StatusOr<std::unique_ptr<Client>> ConnectAs(const std::string& socket, const std::string& name,
                                                  bool without_ipc) {
  ClientOptions options;
  options.store_socket = socket;
  options.client_name = name;
  options.get_without_ipc = without_ipc;
  return Client::Connect(options);
}

int Fail(const std::string& role, const absl::Status& status) {
  std::fprintf(stderr, "shm_torture_worker %s: %s\n", role.c_str(), status.ToString().c_str());
  return 1;
}

// ---- The writer ----

struct WriterCounts {
  uint64_t puts = 0;             // inline puts that stored a version
  uint64_t creates = 0;          // create + write + seal that stored a version
  uint64_t aborts = 0;           // created, written, aborted
  uint64_t deletes = 0;          // deletes of a present object (now or once unreferenced)
  uint64_t deletes_missing = 0;  // deletes of an absent id
  uint64_t evict_calls = 0;
  uint64_t evicted_objects = 0;    // by explicit Evict
  uint64_t kept = 0;               // a new version not made: the id still has one
  uint64_t held_after_delete = 0;  // ... not made right after a delete: a reader holds the old one
  uint64_t out_of_memory = 0;      // a new version refused: everything left is referenced
};

class Writer {
 public:
  Writer(std::unique_ptr<Client> client, uint64_t seed, uint64_t ids)
      : client_(std::move(client)), rng_(seed), ids_(ids) {}

  absl::Status Run(absl::Duration duration) {
    const absl::Time end = absl::Now() + duration;
    while (absl::Now() < end) {
      const uint64_t number = Uniform(0, ids_ - 1);
      const uint64_t op = Uniform(0, 99);
      if (op < 45) {  // a new version where there is none (or the old one stays)
        RETURN_IF_ERROR(WriteVersion(number, /*deleted=*/false));
      } else if (op < 75) {  // delete and re-create at once: the old block is the likeliest to be reused
        ASSIGN_OR_RETURN(const bool deleted, DeleteOne(number));
        RETURN_IF_ERROR(WriteVersion(number, deleted));
      } else if (op < 98) {
        RETURN_IF_ERROR(DeleteOne(number).status());
      } else {
        ASSIGN_OR_RETURN(EvictReply evicted, client_->Evict(Uniform(64 * 1024, 1024 * 1024)));
        ++c_.evict_calls;
        c_.evicted_objects += evicted.objects_evicted;
      }
    }
    return absl::OkStatus();
  }

  const WriterCounts& counts() const { return c_; }

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }

  // One new version of `number`, inline or written in place. ObjectExists and OutOfMemory are
  // counted, not errors.
  absl::Status WriteVersion(uint64_t number, bool deleted) {
    const ObjectID id = TortureId(number);
    const uint64_t version = next_version_++;
    uint8_t metadata[kMetadataBytes];
    FillMetadata(number, version, metadata);
    const absl::Span<const uint8_t> meta =
        Uniform(0, 3) == 0 ? absl::MakeConstSpan(metadata) : absl::Span<const uint8_t>();
    absl::Status status;
    const uint64_t kind = Uniform(0, 9);
    if (kind < 4) {  // small, inline: one round trip
      scratch_.resize(Uniform(kHeaderBytes, kind == 0 ? 60 * 1024 : 4 * 1024));
      FillData(number, version, absl::MakeSpan(scratch_), meta.size());
      status = client_->Put(id, scratch_, meta);
      if (status.ok()) ++c_.puts;
    } else {  // larger, written in place in the arena (Create copied the metadata)
      absl::StatusOr<CreatedObject> created =
          client_->Create(id, Uniform(4 * 1024, 256 * 1024), meta, /*evict_if_full=*/true);
      status = created.status();
      if (created.ok()) {
        FillData(number, version, created->data, created->metadata.size());
        if (Uniform(0, 19) == 0) {
          status = client_->Abort(id);
          if (status.ok()) ++c_.aborts;
        } else if (Uniform(0, 1) == 0) {
          status = client_->SealAndRelease(id, ObjectChecksum(created->data, created->metadata));
          if (status.ok()) ++c_.creates;
        } else {
          status = client_->Seal(id);
          if (status.ok()) status = client_->Release(id);
          if (status.ok()) ++c_.creates;
        }
      }
    }
    if (ErrorCodeOf(status) == ErrorCode::kObjectExists) {
      ++(deleted ? c_.held_after_delete : c_.kept);
      return absl::OkStatus();
    }
    if (ErrorCodeOf(status) == ErrorCode::kOutOfMemory) {
      ++c_.out_of_memory;
      return absl::OkStatus();
    }
    return status;
  }

  // Deletes `number`: true if it was there (deleted now, or once no reference holds it).
  absl::StatusOr<bool> DeleteOne(uint64_t number) {
    absl::Status status = client_->Delete({TortureId(number)});
    if (status.ok()) {
      ++c_.deletes;
      return true;
    }
    if (ErrorCodeOf(status) != ErrorCode::kObjectNotFound) return status;
    ++c_.deletes_missing;
    return false;
  }

  std::unique_ptr<Client> client_;
  std::mt19937_64 rng_;
  const uint64_t ids_;
  uint64_t next_version_ = 1;
  std::vector<uint8_t> scratch_;
  WriterCounts c_;
};

int RunWriter(const std::string& socket, absl::Duration duration, uint64_t seed, uint64_t ids) {
  auto client = ConnectAs(socket, "torture-writer", true);
  if (!client.ok()) return Fail("writer", client.status());
  Writer writer(std::move(client).value(), seed, ids);
  const absl::Status status = writer.Run(duration);
  const WriterCounts& c = writer.counts();
  nlohmann::json out = {{"role", "writer"},
                        {"puts", c.puts},
                        {"creates", c.creates},
                        {"aborts", c.aborts},
                        {"deletes", c.deletes},
                        {"deletes_missing", c.deletes_missing},
                        {"evict_calls", c.evict_calls},
                        {"evicted_objects", c.evicted_objects},
                        {"kept", c.kept},
                        {"held_after_delete", c.held_after_delete},
                        {"out_of_memory", c.out_of_memory}};
  std::printf("%s\n", out.dump().c_str());
  if (!status.ok()) return Fail("writer", status);
  return 0;
}

// ---- The readers ----

struct ReaderCounts {
  uint64_t gets = 0;
  uint64_t reads = 0;               // buffers obtained and checked
  uint64_t slot_reads = 0;          // ... held through a slot (info().ref_count == 0)
  uint64_t socket_reads = 0;        // ... held by a store reference (ref_count >= 1)
  uint64_t misses = 0;              // not found / not sealed / not sealed in time
  uint64_t held_max = 0;            // most buffers held at once
  uint64_t rechecks = 0;            // second checks just before a release
  uint64_t mismatches = 0;          // checks that failed, either time
  uint64_t changed_while_held = 0;  // second checks that failed after a first that passed
};

struct Held {
  ObjectBuffer buffer;
  uint64_t number = 0;
  uint64_t version = 0;
};

class Reader {
 public:
  Reader(std::unique_ptr<Client> slots, std::unique_ptr<Client> socket, uint64_t seed, uint64_t ids)
      : slots_(std::move(slots)), socket_(std::move(socket)), rng_(seed), ids_(ids) {}

  absl::Status Run(absl::Duration duration) {
    const absl::Time end = absl::Now() + duration;
    while (absl::Now() < end) {
      const uint64_t hold_target = Uniform(0, 9) < 7 ? 1 : Uniform(2, kMaxHeld);
      const absl::Duration hold_for = absl::Microseconds(hold_target == 1 ? 0 : Uniform(0, 5000));
      while (held_.size() < hold_target && absl::Now() < end) RETURN_IF_ERROR(GetSome());
      c_.held_max = std::max<uint64_t>(c_.held_max, held_.size());
      if (hold_for > absl::ZeroDuration()) absl::SleepFor(hold_for);
      RETURN_IF_ERROR(ReleaseAll());
    }
    return absl::OkStatus();
  }

  const ReaderCounts& counts() const { return c_; }

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_); }

  // One GetOne (mostly), a batch Get of a few ids, or a get that waits a little.
  absl::Status GetSome() {
    Client& client = Uniform(0, 3) == 0 ? *socket_ : *slots_;
    const uint64_t how = Uniform(0, 19);
    if (how < 3) {  // a batch, duplicates allowed
      std::vector<uint64_t> numbers(std::min<uint64_t>(Uniform(2, 8), kMaxHeld - held_.size()));
      std::vector<ObjectID> ids;
      for (uint64_t& n : numbers) {
        n = Uniform(0, ids_ - 1);
        ids.push_back(TortureId(n));
      }
      ++c_.gets;
      ASSIGN_OR_RETURN(std::vector<ObjectBuffer> buffers, client.Get(ids));
      for (size_t i = 0; i < buffers.size(); ++i) RETURN_IF_ERROR(Take(numbers[i], std::move(buffers[i])));
      return absl::OkStatus();
    }
    const uint64_t number = Uniform(0, ids_ - 1);
    const absl::Duration timeout = how == 3 ? absl::Milliseconds(2) : absl::ZeroDuration();
    ++c_.gets;
    absl::StatusOr<ObjectBuffer> buffer = client.GetOne(TortureId(number), timeout);
    if (!buffer.ok()) {
      if (!IsMiss(buffer.status())) return buffer.status();
      ++c_.misses;
      return absl::OkStatus();
    }
    return Take(number, std::move(buffer).value());
  }

  static bool IsMiss(const absl::Status& status) {
    const ErrorCode code = ErrorCodeOf(status);
    return code == ErrorCode::kObjectNotFound || code == ErrorCode::kObjectNotSealed ||
           code == ErrorCode::kDeadlineExceeded;
  }

  // Checks a fresh buffer and keeps it.
  absl::Status Take(uint64_t number, ObjectBuffer buffer) {
    if (!buffer.valid()) {
      if (!IsMiss(buffer.status())) return buffer.status();
      ++c_.misses;
      return absl::OkStatus();
    }
    ++c_.reads;
    ++(buffer.info().ref_count == 0 ? c_.slot_reads : c_.socket_reads);
    Held h{std::move(buffer), number, 0};
    const std::string problem = CheckObject(number, h.buffer, &h.version);
    if (!problem.empty()) Mismatch("get", h, problem);
    held_.push_back(std::move(h));
    return absl::OkStatus();
  }

  // Checks every held buffer once more (has its block been reclaimed under it?) and releases it:
  // one by one, or in one batch per client.
  absl::Status ReleaseAll() {
    for (Held& h : held_) {
      ++c_.rechecks;
      uint64_t version = h.version;
      std::string problem = CheckObject(h.number, h.buffer, &version);
      if (problem.empty() && version != h.version) problem = absl::StrCat("now version ", version);
      if (!problem.empty()) {
        ++c_.changed_while_held;
        Mismatch("release", h, problem);
      }
    }
    if (Uniform(0, 1) == 0) {
      for (Held& h : held_) RETURN_IF_ERROR(h.buffer.Release());
    } else {
      std::vector<ObjectBuffer> of_slots, of_socket;
      for (Held& h : held_) {
        (h.buffer.info().ref_count == 0 ? of_slots : of_socket).push_back(std::move(h.buffer));
      }
      RETURN_IF_ERROR(slots_->Release(absl::MakeSpan(of_slots)));
      RETURN_IF_ERROR(socket_->Release(absl::MakeSpan(of_socket)));
    }
    held_.clear();
    return absl::OkStatus();
  }

  void Mismatch(const char* when, const Held& h, const std::string& problem) {
    if (c_.mismatches++ < kMaxReportedMismatches) {
      const ObjectInfo& info = h.buffer.info();
      std::fprintf(stderr,
                   "shm_torture_worker reader: MISMATCH at %s of torture-%lu (%s): %s; generation %lu, version "
                   "%lu, offset %lu, %lu+%lu bytes, ref_count %d (%s)\n",
                   when, static_cast<unsigned long>(h.number), info.id.Hex().c_str(), problem.c_str(),
                   static_cast<unsigned long>(info.generation), static_cast<unsigned long>(h.version),
                   static_cast<unsigned long>(info.offset), static_cast<unsigned long>(info.data_size),
                   static_cast<unsigned long>(info.metadata_size), info.ref_count,
                   info.ref_count == 0 ? "slot" : "socket");
    }
  }

  std::unique_ptr<Client> slots_;
  std::unique_ptr<Client> socket_;
  std::mt19937_64 rng_;
  const uint64_t ids_;
  std::vector<Held> held_;
  ReaderCounts c_;
};

int RunReader(const std::string& socket, absl::Duration duration, uint64_t seed, uint64_t ids) {
  auto slots = ConnectAs(socket, "torture-reader", true);
  if (!slots.ok()) return Fail("reader", slots.status());
  auto by_socket = ConnectAs(socket, "torture-reader-socket", false);
  if (!by_socket.ok()) return Fail("reader", by_socket.status());
  Reader reader(std::move(slots).value(), std::move(by_socket).value(), seed, ids);
  absl::Status status = reader.Run(duration);
  const ReaderCounts& c = reader.counts();
  nlohmann::json out = {{"role", "reader"},
                        {"gets", c.gets},
                        {"reads", c.reads},
                        {"slot_reads", c.slot_reads},
                        {"socket_reads", c.socket_reads},
                        {"misses", c.misses},
                        {"held_max", c.held_max},
                        {"rechecks", c.rechecks},
                        {"mismatches", c.mismatches},
                        {"changed_while_held", c.changed_while_held}};
  std::printf("%s\n", out.dump().c_str());
  if (!status.ok()) return Fail("reader", status);
  return c.mismatches == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rplasma

int main(int argc, char** argv) {
  uint64_t seconds = 0, seed = 0, ids = 0;
  if (argc != 6 || !absl::SimpleAtoi(argv[3], &seconds) || !absl::SimpleAtoi(argv[4], &seed) ||
      !absl::SimpleAtoi(argv[5], &ids) || ids == 0) {
    std::fprintf(stderr, "usage: shm_torture_worker writer|reader SOCKET SECONDS SEED IDS\n");
    return 2;
  }
  const std::string role = argv[1];
  const absl::Duration duration = absl::Seconds(seconds);
  if (role == "writer") return rplasma::RunWriter(argv[2], duration, seed, ids);
  if (role == "reader") return rplasma::RunReader(argv[2], duration, seed, ids);
  std::fprintf(stderr, "shm_torture_worker: unknown role %s\n", argv[1]);
  return 2;
}
