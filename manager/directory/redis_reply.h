// RedisReply: owner of one hiredis reply tree, read through RedisReplyView without exposing
// hiredis types. Everything in a reply came from outside the process: callers check type() before
// reading a field, and a view of the wrong type yields empty/zero values, never a crash.
//
// Thread-safety: immutable after construction; views are valid while their RedisReply lives.
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_REPLY_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_REPLY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct redisReply;   // hiredis
struct redisReader;  // hiredis

namespace rplasma {

// The most elements an array reply may have. hiredis allocates an array's table of element
// pointers when it reads the header "*N", before any element arrives: from outside the process,
// N can be anything up to INT_MAX, 16 GiB of table for a few bytes of input (the fuzzer's
// "*488888888" asked for 3.9 GB). No reply the directory reads comes near this many: its arrays are
// SSCAN pages, node sets, object hashes and CLUSTER SLOTS.
inline constexpr int kMaxRedisArrayElements = 1 << 20;

// Makes `reader` refuse an array reply of more than kMaxRedisArrayElements elements: the read fails
// (hiredis reports it as running out of memory; RedisReadErrorText says what it was).
void LimitRedisArrays(redisReader* reader);

// The text for a failed hiredis read on this thread whose error string is `errstr`: what the limit
// refused, if it refused an array since the last call here, else `errstr`.
std::string RedisReadErrorText(const char* errstr);

class RedisReplyView {
 public:
  enum class Type { kString, kArray, kInteger, kNil, kStatus, kError, kUnknown };

  explicit RedisReplyView(const redisReply* reply) : reply_(reply) {}

  Type type() const;
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_integer() const { return type() == Type::kInteger; }
  bool is_nil() const { return type() == Type::kNil; }
  bool is_error() const { return type() == Type::kError; }
  // An error reply "WRONGTYPE ...": the key holds a value of another type.
  bool is_wrong_type() const;

  // The bytes of a string, status or error reply; "" for other types.
  absl::string_view str() const;
  // The value of an integer reply; 0 for other types.
  int64_t integer() const;
  // Number of elements of an array reply; 0 for other types.
  size_t size() const;
  // Element `i` of an array reply. REQUIRES: i < size().
  RedisReplyView element(size_t i) const;

  // A short description for logs: "string(12 bytes)", "error(WRONGTYPE ...)", ...
  std::string Describe() const;

 private:
  const redisReply* reply_;  // never null
};

// The status for the error reply `reply` to `op` sent to Redis at `address`: kUnavailable for
// transient server states (LOADING, BUSY, OOM, MASTERDOWN, READONLY, TRYAGAIN, NOREPLICAS),
// kProtocolError otherwise. REQUIRES: reply.is_error().
absl::Status RedisErrorReplyStatus(const RedisReplyView& reply, absl::string_view address, absl::string_view op);

class RedisReply {
 public:
  // Takes ownership of `reply` (from redisGetReply). REQUIRES: reply != nullptr.
  explicit RedisReply(redisReply* reply) : reply_(reply) {}

  // The one reply `resp` holds, in the Redis protocol (RESP): what a connection would have read
  // from those bytes, for tests and fuzzers of reply parsing. kProtocolError if the bytes are
  // malformed, incomplete, or hold more than one reply.
  static absl::StatusOr<RedisReply> Parse(absl::string_view resp);

  RedisReplyView view() const { return RedisReplyView(reply_.get()); }

 private:
  struct Deleter {
    void operator()(redisReply* reply) const;
  };
  std::unique_ptr<redisReply, Deleter> reply_;
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_REPLY_H_
