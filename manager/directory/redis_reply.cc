#include "manager/directory/redis_reply.h"

#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include <hiredis/hiredis.h>

#include "protocol/base/status.h"

namespace rplasma {

RedisReplyView::Type RedisReplyView::type() const {
  switch (reply_->type) {
    case REDIS_REPLY_STRING: return Type::kString;
    case REDIS_REPLY_ARRAY: return Type::kArray;
    case REDIS_REPLY_INTEGER: return Type::kInteger;
    case REDIS_REPLY_NIL: return Type::kNil;
    case REDIS_REPLY_STATUS: return Type::kStatus;
    case REDIS_REPLY_ERROR: return Type::kError;
    default: return Type::kUnknown;
  }
}

absl::string_view RedisReplyView::str() const {
  switch (reply_->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      if (reply_->str == nullptr) return {};
      return absl::string_view(reply_->str, reply_->len);
    default: return {};
  }
}

int64_t RedisReplyView::integer() const {
  return reply_->type == REDIS_REPLY_INTEGER ? static_cast<int64_t>(reply_->integer) : 0;
}

size_t RedisReplyView::size() const {
  if (reply_->type != REDIS_REPLY_ARRAY || reply_->element == nullptr) return 0;
  return reply_->elements;
}

RedisReplyView RedisReplyView::element(size_t i) const { return RedisReplyView(reply_->element[i]); }

std::string RedisReplyView::Describe() const {
  constexpr size_t kMaxQuoted = 80;
  switch (type()) {
    case Type::kString: return absl::StrFormat("string(%d bytes)", str().size());
    case Type::kArray: return absl::StrFormat("array(%d elements)", size());
    case Type::kInteger: return absl::StrFormat("integer(%d)", integer());
    case Type::kNil: return "nil";
    case Type::kStatus: return absl::StrFormat("status(%s)", absl::CHexEscape(str().substr(0, kMaxQuoted)));
    case Type::kError: return absl::StrFormat("error(%s)", absl::CHexEscape(str().substr(0, kMaxQuoted)));
    case Type::kUnknown: break;
  }
  return absl::StrFormat("unknown reply type %d", reply_->type);
}

bool RedisReplyView::is_wrong_type() const { return is_error() && absl::StartsWith(str(), "WRONGTYPE"); }

absl::Status RedisErrorReplyStatus(const RedisReplyView& reply, absl::string_view address, absl::string_view op) {
  constexpr size_t kMaxQuoted = 120;
  absl::string_view text = reply.str();
  std::string message = absl::StrFormat("redis %s: %s: %s", address, op, absl::CHexEscape(text.substr(0, kMaxQuoted)));
  for (absl::string_view transient : {"LOADING", "BUSY", "OOM", "MASTERDOWN", "READONLY", "TRYAGAIN", "NOREPLICAS"}) {
    if (absl::StartsWith(text, transient)) return MakeError(ErrorCode::kUnavailable, message);
  }
  return ProtocolError(message);
}

void RedisReply::Deleter::operator()(redisReply* reply) const { freeReplyObject(reply); }

absl::StatusOr<RedisReply> RedisReply::Parse(absl::string_view resp) {
  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreate(), redisReaderFree);
  if (reader == nullptr) return MakeError(ErrorCode::kInternal, "redisReaderCreate: out of memory");
  if (redisReaderFeed(reader.get(), resp.data(), resp.size()) != REDIS_OK) {
    return ProtocolError(absl::StrFormat("RESP: %s", reader->errstr));
  }
  void* first = nullptr;
  if (redisReaderGetReply(reader.get(), &first) != REDIS_OK) {
    return ProtocolError(absl::StrFormat("RESP: %s", reader->errstr));
  }
  if (first == nullptr) return ProtocolError("RESP: incomplete reply");
  RedisReply reply(static_cast<redisReply*>(first));
  void* second = nullptr;
  if (redisReaderGetReply(reader.get(), &second) != REDIS_OK || second != nullptr) {
    if (second != nullptr) freeReplyObject(second);
    return ProtocolError("RESP: more than one reply");
  }
  if (reader->pos < reader->len) return ProtocolError("RESP: bytes after the reply");
  return reply;
}

}  // namespace rplasma
