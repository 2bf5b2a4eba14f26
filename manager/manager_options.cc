#include "manager/manager_options.h"

#include "protocol/base/status.h"

namespace rplasma::manager {

absl::Status ManagerOptions::Validate() const {
  auto invalid = [](absl::string_view m) { return MakeError(ErrorCode::kInvalidArgument, m); };
  if (store_socket.empty()) return invalid("--store-socket is required");
  if (absl::Status s = metrics.Validate(); !s.ok()) return s;
  if (directory.address.empty()) return invalid("--redis is required (host:port or unix:/path)");
  if (listen.empty() || listen.find(':') == std::string::npos) return invalid("--listen must be host:port");
  if (transport != "tcp" && transport != "verbs" && transport != "auto") {
    return invalid("--transport must be tcp, verbs or auto");
  }
  if (secret_file.empty()) {
    return invalid("--secret-file is required: peers authenticate with a shared secret (HMAC challenge)");
  }
  if (node_name.empty() || node_name.size() > 100) return invalid("--node-name must be 1..100 characters");
  for (char c : node_name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return invalid("--node-name may hold only [A-Za-z0-9._-]");
  }
  if (leases.ttl < absl::Milliseconds(100)) return invalid("--lease-ttl must be at least 100ms");
  if (directory.node_ttl < absl::Milliseconds(300)) return invalid("--node-ttl must be at least 300ms");
  if (directory.op_timeout <= absl::ZeroDuration()) return invalid("--redis-timeout must be positive");
  if (reconcile_interval < absl::Milliseconds(100)) return invalid("--reconcile-interval must be at least 100ms");
  if (copy_publish_delay < absl::ZeroDuration() || copy_publish_delay > absl::Minutes(10)) {
    return invalid("--copy-publish-delay must be 0..10m");
  }
  if (max_client_connections == 0) return invalid("--max-client-connections must be positive");
  if (client_request_deadline < absl::Milliseconds(10))
    return invalid("--client-request-deadline must be at least 10ms");
  if (fetch.read_chunk_bytes < 4096) return invalid("--read-chunk-bytes must be at least 4096");
  return absl::OkStatus();
}

}  // namespace rplasma::manager
