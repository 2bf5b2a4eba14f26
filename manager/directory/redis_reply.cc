#include "manager/directory/redis_reply.h"

#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include <hiredis/hiredis.h>

#include "protocol/base/status.h"

namespace rplasma {
namespace {

// Whether LimitRedisArrays' createArray refused an array on this thread (RedisReadErrorText).
thread_local int refused_elements = 0;

void* CreateLimitedArray(const redisReadTask* task, int elements);

// hiredis' own reply functions, and the same with createArray limited. Every reader starts with
// the same (static) defaults, so the first one to be limited sets them.
struct LimitedFunctions {
  const redisReplyObjectFunctions* defaults;
  redisReplyObjectFunctions limited;
};
// Not const: hiredis' reader points to its functions as mutable (never written after this).
LimitedFunctions& Limited(const redisReplyObjectFunctions* defaults) {
  static LimitedFunctions functions = [defaults] {
    LimitedFunctions f{defaults, *defaults};
    f.limited.createArray = &CreateLimitedArray;
    return f;
  }();
  return functions;
}

void* CreateLimitedArray(const redisReadTask* task, int elements) {
  if (elements > kMaxRedisArrayElements) {
    refused_elements = elements;
    return nullptr;  // hiredis: an out-of-memory error, the read fails
  }
  return Limited(nullptr).defaults->createArray(task, elements);
}

}  // namespace

void LimitRedisArrays(redisReader* reader) {
  if (reader == nullptr || reader->fn == nullptr || reader->fn->createArray == nullptr) return;
  LimitedFunctions& functions = Limited(reader->fn);
  if (reader->fn == functions.defaults) reader->fn = &functions.limited;  // else limited already
}

std::string RedisReadErrorText(const char* errstr) {
  if (refused_elements == 0) return errstr != nullptr ? errstr : "no detail";
  const int elements = refused_elements;
  refused_elements = 0;
  return absl::StrFormat("an array reply of %d elements (more than the %d allowed)", elements, kMaxRedisArrayElements);
}

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
  LimitRedisArrays(reader.get());
  if (redisReaderFeed(reader.get(), resp.data(), resp.size()) != REDIS_OK) {
    return ProtocolError(absl::StrFormat("RESP: %s", RedisReadErrorText(reader->errstr)));
  }
  void* first = nullptr;
  if (redisReaderGetReply(reader.get(), &first) != REDIS_OK) {
    return ProtocolError(absl::StrFormat("RESP: %s", RedisReadErrorText(reader->errstr)));
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
