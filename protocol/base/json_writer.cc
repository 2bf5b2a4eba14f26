#include "protocol/base/json_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rplasma {

void AppendJsonString(std::string* out, absl::string_view text) {
  out->push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        // The other control characters have no short escape; bytes >= 0x80 are UTF-8 and pass.
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void JsonObject::Key(absl::string_view key) {
  if (!members_.empty()) members_.push_back(',');
  AppendJsonString(&members_, key);
  members_.push_back(':');
}

JsonObject& JsonObject::Number(absl::string_view key, uint64_t value) {
  Key(key);
  absl::StrAppend(&members_, value);
  return *this;
}

JsonObject& JsonObject::SignedNumber(absl::string_view key, int64_t value) {
  Key(key);
  absl::StrAppend(&members_, value);
  return *this;
}

JsonObject& JsonObject::Decimal(absl::string_view key, double value, int decimals) {
  Key(key);
  if (std::isfinite(value)) {
    absl::StrAppendFormat(&members_, "%.*f", decimals, value);
  } else {
    members_.append("null");
  }
  return *this;
}

JsonObject& JsonObject::String(absl::string_view key, absl::string_view value) {
  Key(key);
  AppendJsonString(&members_, value);
  return *this;
}

JsonObject& JsonObject::Object(absl::string_view key, const JsonObject& value) {
  Key(key);
  members_.append(value.str());
  return *this;
}

JsonObject& JsonObject::Array(absl::string_view key, const JsonArray& value) {
  Key(key);
  members_.append(value.str());
  return *this;
}

JsonObject& JsonObject::Members(const JsonObject& other) {
  if (other.members_.empty()) return *this;
  if (!members_.empty()) members_.push_back(',');
  members_.append(other.members_);
  return *this;
}

JsonArray& JsonArray::Object(const JsonObject& value) {
  if (!elements_.empty()) elements_.push_back(',');
  elements_.append(value.str());
  return *this;
}

}  // namespace rplasma
