// RedisDirectoryOptions: how RedisDirectory reaches Redis and how long node records live.
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_DIRECTORY_OPTIONS_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_DIRECTORY_OPTIONS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "protocol/base/clock.h"

namespace rplasma {

struct RedisDirectoryOptions {
  // "host:port" or "unix:/path/to/redis.sock" of one redis-server, or comma-separated seeds of a
  // Redis Cluster ("10.0.0.1:7000,10.0.0.2:7000"): the first that answers tells whether it is a
  // cluster, and the cluster's other masters are learnt from it (redis_router.h).
  std::string address = "127.0.0.1:6379";
  // Lifetime of this node's record. The caller calls Heartbeat() about every node_ttl / 3; a node
  // that misses heartbeats for node_ttl disappears from lookups. At least 10 ms.
  absl::Duration node_ttl = absl::Seconds(5);
  // Bound on one operation: connecting and the whole command pipeline. No call blocks longer
  // (a Lookup of more than max_pipeline ids takes one such bound per chunk). At least 1 ms.
  absl::Duration op_timeout = absl::Seconds(1);
  // After a failed connect, no new attempt before this delay; it doubles per failure up to
  // reconnect_backoff_max and resets on success. Operations in between fail at once.
  absl::Duration reconnect_backoff_initial = absl::Milliseconds(50);
  absl::Duration reconnect_backoff_max = absl::Seconds(2);
  // Every key starts with "<key_prefix>:"; [A-Za-z0-9._:-]{1,64}. Lets clusters (or tests) share
  // one Redis.
  std::string key_prefix = "rplasma";
  // Heartbeat() also removes the entries of expired nodes (SweepExpiredNodes) at most this often.
  // absl::ZeroDuration() turns that off (lookups still clean lazily).
  absl::Duration sweep_interval = absl::Seconds(30);
  // Lookup treats a node it found alive as alive for this long without asking Redis again, so a
  // steady stream of lookups costs one round trip, not two. A node that dies is then still tried
  // for at most this long (its connect fails fast). absl::ZeroDuration() asks every time.
  absl::Duration liveness_cache = absl::Milliseconds(200);
  // Most commands sent in one pipeline (one round trip); bigger batches are split. 2..65536.
  size_t max_pipeline = 1024;
  // Time for deadlines, reconnect back-off, sweeps and the liveness cache. Borrowed; tests pass a
  // fake one.
  Clock* clock = &Clock::Real();

  // kInvalidArgument naming the first bad field.
  absl::Status Validate() const;
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_DIRECTORY_OPTIONS_H_
