#include "manager/directory/redis_directory_options.h"

#include "absl/strings/str_format.h"

#include "manager/directory/directory_codec.h"
#include "manager/directory/redis_router.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("RedisDirectoryOptions.%s: %s", field, why));
}

}  // namespace

absl::Status RedisDirectoryOptions::Validate() const {
  RETURN_IF_ERROR(ParseRedisSeeds(address).status());
  if (node_ttl < absl::Milliseconds(10)) return Bad("node_ttl", "must be at least 10ms");
  if (op_timeout < absl::Milliseconds(1)) return Bad("op_timeout", "must be at least 1ms");
  if (clock == nullptr) return Bad("clock", "must be set");
  if (reconnect_backoff_initial < absl::Milliseconds(1)) {
    return Bad("reconnect_backoff_initial", "must be at least 1ms");
  }
  if (reconnect_backoff_max < reconnect_backoff_initial) {
    return Bad("reconnect_backoff_max", "must not be below reconnect_backoff_initial");
  }
  if (!DirectoryCodec::IsValidPrefix(key_prefix)) return Bad("key_prefix", "must match [A-Za-z0-9._:-]{1,64}");
  if (sweep_interval < absl::ZeroDuration()) return Bad("sweep_interval", "must not be negative");
  if (liveness_cache < absl::ZeroDuration()) return Bad("liveness_cache", "must not be negative");
  if (max_pipeline < 2 || max_pipeline > 65536) return Bad("max_pipeline", "must be in 2..65536");
  return absl::OkStatus();
}

}  // namespace rplasma
