#include "bench-mpi/mpi/bench_mpi_options.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

#include "protocol/base/status.h"

namespace rplasma::bench {

absl::string_view FetchPatternName(FetchPattern pattern) {
  switch (pattern) {
    case FetchPattern::kPairs: return "pairs";
    case FetchPattern::kBroadcast: return "broadcast";
    case FetchPattern::kGather: return "gather";
    case FetchPattern::kAllToAll: return "alltoall";
  }
  return "?";
}

absl::string_view FetchProtocolName(FetchProtocol protocol) {
  switch (protocol) {
    case FetchProtocol::kGet: return "get";
    case FetchProtocol::kPin: return "pin";
    case FetchProtocol::kAuto: return "auto";
  }
  return "?";
}

absl::StatusOr<std::vector<FetchPattern>> ParsePatterns(absl::string_view text) {
  std::vector<FetchPattern> out;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (word == "pairs" || word == "one-to-one") {
      out.push_back(FetchPattern::kPairs);
    } else if (word == "broadcast" || word == "one-to-many") {
      out.push_back(FetchPattern::kBroadcast);
    } else if (word == "gather" || word == "many-to-one") {
      out.push_back(FetchPattern::kGather);
    } else if (word == "alltoall" || word == "all-to-all") {
      out.push_back(FetchPattern::kAllToAll);
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       absl::StrCat("--patterns: unknown pattern '", word, "' (pairs, broadcast, gather, alltoall)"));
    }
  }
  if (out.empty()) return MakeError(ErrorCode::kInvalidArgument, "--patterns: empty");
  return out;
}

absl::StatusOr<std::vector<FetchProtocol>> ParseProtocols(absl::string_view text) {
  std::vector<FetchProtocol> out;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (word == "get" || word == "send") {  // send, read: the old names
      out.push_back(FetchProtocol::kGet);
    } else if (word == "pin" || word == "read") {
      out.push_back(FetchProtocol::kPin);
    } else if (word == "auto") {
      out.push_back(FetchProtocol::kAuto);
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       absl::StrCat("--protocols: unknown protocol '", word, "' (get, pin, auto)"));
    }
  }
  if (out.empty()) return MakeError(ErrorCode::kInvalidArgument, "--protocols: empty");
  return out;
}

std::string ExpandNodeName(absl::string_view pattern, int rank, absl::string_view host) {
  return absl::StrReplaceAll(pattern, {{"{rank}", absl::StrCat(rank)}, {"{host}", host}});
}

absl::Status ValidateNodeName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= 100;
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                c == '-');
  }
  if (ok) return absl::OkStatus();
  return MakeError(ErrorCode::kInvalidArgument,
                   absl::StrCat("--node-name: '", name, "' is not 1..100 of [A-Za-z0-9._-] ({rank}, {host} allowed)"));
}

std::vector<uint64_t> BenchMpiOptions::Sizes() const {
  if (!sizes.empty()) return sizes;
  std::vector<uint64_t> out;
  for (uint64_t s = min_size; s <= max_size; s *= 2) out.push_back(s);
  return out;
}

absl::Status BenchMpiOptions::Validate() const {
  auto bad = [](absl::string_view what) { return MakeError(ErrorCode::kInvalidArgument, what); };
  if (patterns.empty()) return bad("no pattern to run");
  if (protocols.empty()) return bad("no protocol to run");
  if (min_size == 0 || max_size < min_size) return bad("need 0 < --min-size <= --max-size");
  for (uint64_t s : sizes) {
    if (s == 0) return bad("--sizes: a size of 0");
  }
  if (concurrency.empty()) return bad("--concurrency: empty");
  for (int c : concurrency) {
    if (c < 1 || c > 256) return bad("--concurrency: each value must be in 1..256");
  }
  if (batch < 1) return bad(absl::StrCat("--batch: ", batch, " ids per Fetch call; must be at least 1"));
  if (warmup < 0 || repeat < 1) return bad("need --warmup >= 0 and --repeat >= 1");
  if (fetch_timeout <= absl::ZeroDuration()) return bad("--fetch-timeout must be positive");
  if (transport != "tcp" && transport != "verbs" && transport != "auto") return bad("--transport: tcp | verbs | auto");
  if (listen_host.empty()) return bad("--listen-host: empty");
  RETURN_IF_ERROR(ValidateNodeName(ExpandNodeName(node_name, 0, "host")));
  if (redis.empty() && !start_redis) return bad("need --redis HOST:PORT or --start-redis");
  if (attach && (store_socket.empty() || manager_socket.empty())) {
    return bad("--attach needs --store-socket and --manager-socket");
  }
  if (attach && protocols.size() != 1) return bad("--attach: the managers are not restarted; give one --protocols");
  if (attach && tune) return bad("--tune restarts the managers; it cannot --attach");
  if (csv.empty()) return bad("--csv: empty");
  if (tune && (tune_min_size == 0 || tune_max_size <= tune_min_size || tune_max_size > kMaxGetBytes)) {
    return bad("--tune sizes: need 0 < min < max <= 64 MiB - 4 KiB (the largest get)");
  }
  if (tune && tune_out.empty()) return bad("--tune-out: empty");
  return absl::OkStatus();
}

}  // namespace rplasma::bench
