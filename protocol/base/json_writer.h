// JsonObject / JsonArray: build one JSON document by hand-picked members, in the order added, for
// the stats documents rplasma processes emit (the manager's StatsReply, `rplasma stats --manager`).
//
// Keys and string values are escaped per RFC 8259 (quote, backslash, control characters); other
// bytes pass through unchanged, so strings should be UTF-8. Integers are written exactly; doubles
// with a fixed number of decimals (non-finite ones as null, which JSON has instead). Nothing here
// parses JSON: tests use a real parser for that.
//
// Thread-safety: value types; not thread-safe.
#ifndef RPLASMA_PROTOCOL_BASE_JSON_WRITER_H_
#define RPLASMA_PROTOCOL_BASE_JSON_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace rplasma {

class JsonArray;

class JsonObject {
 public:
  JsonObject& Number(absl::string_view key, uint64_t value);
  JsonObject& SignedNumber(absl::string_view key, int64_t value);
  // `value` with `decimals` digits after the point ("%.1f" for decimals = 1).
  JsonObject& Decimal(absl::string_view key, double value, int decimals);
  JsonObject& String(absl::string_view key, absl::string_view value);
  JsonObject& Object(absl::string_view key, const JsonObject& value);
  JsonObject& Array(absl::string_view key, const JsonArray& value);
  // Appends every member of `other` (after this object's own), as if added one by one.
  JsonObject& Members(const JsonObject& other);

  bool empty() const { return members_.empty(); }
  std::string str() const { return "{" + members_ + "}"; }

 private:
  void Key(absl::string_view key);
  std::string members_;  // comma-separated `"key":value` pairs
};

class JsonArray {
 public:
  JsonArray& Object(const JsonObject& value);

  std::string str() const { return "[" + elements_ + "]"; }

 private:
  std::string elements_;  // comma-separated values
};

// `text` as a JSON string literal, quotes included: AppendJsonString(&out, "a\"b") appends "a\"b".
void AppendJsonString(std::string* out, absl::string_view text);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_JSON_WRITER_H_
