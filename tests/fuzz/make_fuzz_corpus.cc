// Writes the seed corpus of every fuzzer: real messages made with the project's own encoders, one
// small file per message kind, into <dir>/<target>/ (tests/fuzz/corpus/ is committed output).
//
//   make_fuzz_corpus tests/fuzz/corpus
//
// The peer-auth messages have no public encoder; they are laid out here from the table in
// manager/auth/peer_auth.h (their MACs cannot be right: the fuzzer's peer never knows the secret).
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "manager/directory/directory_codec.h"
#include "manager/peer/peer_messages.h"
#include "manager/transport/tcp/tcp_wire.h"
#include "protocol/frame.h"
#include "protocol/manager_messages.h"
#include "protocol/store_messages.h"
#ifdef RPLASMA_WITH_VERBS
#include "manager/transport/verbs/wire_format.h"
#endif

namespace rplasma {
namespace {

namespace fs = std::filesystem;

class CorpusWriter {
 public:
  CorpusWriter(fs::path root, absl::string_view target) : dir_(root / std::string(target)) {
    fs::create_directories(dir_);
  }
  void Write(absl::string_view name, absl::string_view bytes) {
    std::ofstream out(dir_ / std::string(name), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

 private:
  fs::path dir_;
};

template <size_t N>
absl::string_view AsView(const std::array<uint8_t, N>& bytes) {
  return absl::string_view(reinterpret_cast<const char*>(bytes.data()), N);
}
absl::Span<const uint8_t> AsSpan(absl::string_view s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

void WriteStoreFrames(const fs::path& root) {
  CorpusWriter out(root, "store_frames");
  const ObjectID a = ObjectID::FromLabel("a");
  const ObjectID b = ObjectID::FromLabel("b");
  const std::string data = "hello, object";
  const std::string metadata = "meta";
  PutRequest put{a, AsSpan(data), AsSpan(metadata), 42, true};
  const std::vector<std::pair<std::string, RequestBody>> requests = {
      {"connect", ConnectRequest{"fuzz-client"}},
      {"connect_shared_index", ConnectRequest{"fuzz-client", true}},
      {"slots_released", SlotsReleasedRequest{}},
      {"create", CreateRequest{a, 4096, 16, true}},
      {"seal", SealRequest{a, 0x1234, true}},
      {"abort", AbortRequest{a}},
      {"get", GetRequest{{a, b}, 100}},
      {"release", ReleaseRequest{{a}, true}},
      {"contains", ContainsRequest{{a, b}}},
      {"delete", DeleteRequest{{b}}},
      {"evict", EvictRequest{1 << 20}},
      {"list", ListRequest{a, 16}},
      {"stats", StatsRequest{}},
      {"subscribe", SubscribeRequest{false}},
      {"put", put},
      {"create_batch", CreateBatchRequest{{CreateRequest{a, 1, 0, false}, CreateRequest{b, 2, 3, true}}}},
      {"seal_batch", SealBatchRequest{{SealRequest{a, 1, false}, SealRequest{b, 2, true}}}},
      {"put_batch", PutBatchRequest{{put, PutRequest{b, AsSpan(data), {}, 7, false}}}},
  };
  std::string all;
  uint64_t request_id = 1;
  for (const auto& [name, body] : requests) {
    const std::string frame = EncodeFrame(EncodeRequest(Request{request_id++, body}));
    out.Write(absl::StrCat("request_", name), frame);
    all += frame;
  }
  out.Write("requests_all", all);

  ObjectInfo info{a, ErrorCode::kOk, ObjectState::kSealed, 4096, 13, 4, 7, 42, 1};
  ObjectInfo missing;
  missing.id = b;
  missing.error = ErrorCode::kObjectNotFound;
  StatsReply stats;
  stats.capacity = 1 << 30;
  stats.used_bytes = 4096;
  stats.fragmentation = 0.25;
  const std::vector<std::pair<std::string, Reply>> replies = {
      {"connect", Reply{1, ErrorCode::kOk, "", ConnectReply{1 << 30, "store", kMaxIdsPerRequest}}},
      {"connect_shared_index",
       Reply{1, ErrorCode::kOk, "", ConnectReply{1 << 30, "store", kMaxIdsPerRequest, 4096, 4096}}},
      {"create", Reply{2, ErrorCode::kOk, "", CreateReply{4096, 7}}},
      {"objects", Reply{3, ErrorCode::kOk, "", ObjectsReply{{info, missing}, true}}},
      {"codes", Reply{4, ErrorCode::kOk, "", CodesReply{{ErrorCode::kOk, ErrorCode::kObjectInUse}}}},
      {"evict", Reply{5, ErrorCode::kOk, "", EvictReply{4096, 1}}},
      {"stats", Reply{6, ErrorCode::kOk, "", stats}},
      {"event", Reply{0, ErrorCode::kOk, "", ObjectEvent{EventKind::kDeleted, info}}},
      {"events",
       Reply{0, ErrorCode::kOk, "",
             ObjectEvents{{{EventKind::kSealed, info}, {EventKind::kEvicted, info}, {EventKind::kDeleted, info}}}}},
      {"error", ErrorReply(8, MakeError(ErrorCode::kOutOfMemory, "arena full"))},
  };
  for (const auto& [name, reply] : replies) out.Write(absl::StrCat("reply_", name), EncodeFrame(EncodeReply(reply)));
}

void WriteManagerMessages(const fs::path& root) {
  CorpusWriter out(root, "manager_messages");
  out.Write("fetch", EncodeManagerRequest(ManagerRequest{
                         1, ManagerFetchRequest{{ObjectID::FromLabel("a"), ObjectID::FromLabel("b")}, 500, "node-b"}}));
  out.Write("stats", EncodeManagerRequest(ManagerRequest{2, ManagerStatsRequest{}}));
  out.Write("fetch_reply",
            EncodeManagerReply(ManagerReply{
                1, ErrorCode::kOk, "",
                ManagerFetchReply{{ErrorCode::kOk, ErrorCode::kObjectNotFound}, {"", "no node holds it"}}}));
  out.Write("stats_reply",
            EncodeManagerReply(ManagerReply{2, ErrorCode::kOk, "", ManagerStatsReply{"{\"fetches\":1}", "node-a.1"}}));
  out.Write("error_reply", EncodeManagerReply(ManagerReply{3, ErrorCode::kInvalidArgument, "too many ids", {}}));
}

void WritePeerMessages(const fs::path& root) {
  CorpusWriter out(root, "peer_messages");
  const ObjectID a = ObjectID::FromLabel("a");
  const ObjectID b = ObjectID::FromLabel("b");
  out.Write("get", peer::EncodeRequest(peer::GetRequest{a}));
  out.Write("pin", peer::EncodeRequest(peer::PinRequest{a}));
  out.Write("unpin", peer::EncodeRequest(peer::UnpinRequest{9}));
  out.Write("probe_get", peer::EncodeRequest(peer::ProbeGetRequest{4096}));
  out.Write("probe_pin", peer::EncodeRequest(peer::ProbePinRequest{1 << 20}));
  out.Write("fetch_batch", peer::EncodeRequest(peer::FetchBatchRequest{{a, b, a}, 4096, 8u << 20}));
  out.Write("unpin_batch", peer::EncodeRequest(peer::UnpinBatchRequest{{1, 2, 3}}));

  const std::string bytes = "object bytes+meta";
  const ObjectDescription object{12, 5, 3, 0xfeed};
  const absl::Span<const uint8_t> all = AsSpan(bytes);
  out.Write("get_reply", peer::EncodeGetReply(object, all.subspan(0, 12), all.subspan(12)));
  const peer::PinReply pin{object, transport::RemoteRegion{0x1000, object.total_size(), 77}, 5, 30000};
  out.Write("pin_reply", peer::EncodePinReply(pin));
  out.Write("unpin_reply", peer::EncodeUnpinReply());
  const std::vector<peer::FetchBatchEntry> entries = {
      peer::FetchBatchEntry{absl::OkStatus(), object, all, std::nullopt},
      peer::FetchBatchEntry{MakeError(ErrorCode::kObjectNotFound, "gone"), {}, {}, std::nullopt},
      peer::FetchBatchEntry{absl::OkStatus(), {}, {}, pin},
      peer::FetchBatchEntry{MakeError(ErrorCode::kObjectNotSealed, "not sealed"), {}, {}, std::nullopt},
  };
  out.Write("fetch_batch_reply", peer::EncodeFetchBatchReply(entries));
  out.Write("error_reply", peer::EncodeErrorReply(MakeError(ErrorCode::kUnavailable, "store gone")));
}

void WriteTcpWire(const fs::path& root) {
  using namespace transport::tcp;
  CorpusWriter out(root, "tcp_wire");
  const std::vector<std::pair<std::string, TcpHeader>> headers = {
      {"call", TcpHeader{TcpKind::kCall, 0, 1, 128}},
      {"read", TcpHeader{TcpKind::kRead, 0, 2, kReadRequestBytes}},
      {"call_reply", TcpHeader{TcpKind::kCallReply, 0, 1, 64}},
      {"read_data", TcpHeader{TcpKind::kReadData, 0, 2, 4096}},
      {"error", TcpHeader{TcpKind::kError, static_cast<uint32_t>(ErrorCode::kObjectNotFound), 3, 12}},
  };
  for (const auto& [name, header] : headers) {
    uint8_t bytes[kTcpHeaderBytes + kReadRequestBytes];
    EncodeTcpHeader(header, bytes);
    EncodeReadRequest(1 << 20, 4096, bytes + kTcpHeaderBytes);
    const size_t size = header.kind == TcpKind::kRead ? sizeof(bytes) : kTcpHeaderBytes;
    out.Write(name, absl::string_view(reinterpret_cast<const char*>(bytes), size));
  }
}

#ifdef RPLASMA_WITH_VERBS
void WriteVerbsWireFormat(const fs::path& root) {
  using namespace transport::verbs;
  CorpusWriter out(root, "verbs_wire_format");
  // The fuzzer takes its size limit from the last byte: 1 << (byte % 40); 16 -> 64 KiB.
  auto message = [](const MessageHeader& header, size_t payload) {
    std::string bytes(kMessageHeaderBytes, '\0');
    EncodeMessageHeader(header, reinterpret_cast<uint8_t*>(bytes.data()));
    bytes.append(payload, '\x10');
    return bytes;
  };
  out.Write("request", message(MessageHeader{MessageType::kRequest, 0, 4, 1, 48, 0}, 48));
  out.Write("response_fragment", message(MessageHeader{MessageType::kResponse, 0, 0, 1, 4096, 1024}, 512));
  out.Write("error_response", message(MessageHeader{MessageType::kResponse, kFlagError, 1, 2, 16, 0}, 16));
  out.Write("credit", message(MessageHeader{MessageType::kCredit, 0, 8, 0, 0, 0}, 0));
  ConnectData connect;
  connect.recv_credits = 64;
  connect.message_bytes = 64 * 1024;
  connect.ticket.fill(0xab);
  out.Write("connect_data", AsView(EncodeConnectData(connect)));
  out.Write("accept_data", AsView(EncodeAcceptData(AcceptData{64, 64 * 1024, 16})));
}
#endif

void WritePeerAuth(const fs::path& root) {
  CorpusWriter out(root, "peer_auth");
  // magic u32 | version u16 | u16 (reserved, or the verdict's result) | then nonces and MACs.
  auto head = [](uint16_t third) {
    std::string h;
    for (uint32_t v = 0x55415052; h.size() < 4; v >>= 8) h.push_back(static_cast<char>(v & 0xff));
    h.push_back(1);
    h.push_back(0);
    h.push_back(static_cast<char>(third & 0xff));
    h.push_back(static_cast<char>(third >> 8));
    return h;
  };
  const std::string nonce(16, '\x5a');
  const std::string mac(32, '\x3c');
  const std::string challenge = head(0) + nonce;
  const std::string response = head(0) + nonce + mac;
  out.Write("challenge_then_verdict_ok", challenge + head(0) + mac);  // as the client reads it
  out.Write("challenge_then_verdict_denied", challenge + head(1) + std::string(32, '\0'));
  out.Write("response", response);  // as the server reads it
  out.Write("challenge_only", challenge);
}

void WriteDirectoryCodec(const fs::path& root) {
  CorpusWriter out(root, "directory_codec");
  const std::string node_id = "rank1.3fa9c2d1";
  out.Write("node_record", absl::StrCat(node_id, "\n",
                                        DirectoryCodec::EncodeNodeRecord(NodeRecord{
                                            node_id, "10.0.0.1:7001", "[fe80::1%eth0]:7002", 1732400000000})));
  out.Write("node_record_tcp_only",
            absl::StrCat(node_id, "\n", DirectoryCodec::EncodeNodeRecord(NodeRecord{node_id, "host:1", "", 1})));
  out.Write("location", absl::StrCat(node_id, "\n",
                                     DirectoryCodec::EncodeLocation(ObjectLocation{
                                         node_id, ObjectDescription{1 << 20, 16, 9, 18446744073709551615u}})));
  out.Write("member", absl::StrCat("rplasma\n", ObjectID::FromLabel("a").Hex()));
  out.Write("number", "rplasma\n18446744073709551615");
}

// What Redis Cluster nodes answer the router, as Redis 7 sends it (the project encodes no RESP).
void WriteRedisClusterReplies(const fs::path& root) {
  CorpusWriter out(root, "redis_cluster_replies");
  out.Write("cluster_slots",
            "*2\r\n"
            "*4\r\n:0\r\n:8191\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"
            "*3\r\n$9\r\n127.0.0.1\r\n:7003\r\n$2\r\nid\r\n"
            "*3\r\n:8192\r\n:16383\r\n*3\r\n$0\r\n\r\n:7001\r\n$2\r\nid\r\n");
  out.Write("cluster_slots_empty", "*0\r\n");
  out.Write("moved", "-MOVED 3999 127.0.0.1:6381\r\n");
  out.Write("ask", "-ASK 12182 [::1]:7002\r\n");
  out.Write("clusterdown", "-CLUSTERDOWN Hash slot not served\r\n");
  out.Write("hash_tag", "{user1000}.following");
  // An array header far above kMaxRedisArrayElements inside a well-formed reply (the fuzzer's find:
  // hiredis allocated its 3.9 GB table of element pointers before reading an element).
  out.Write("huge_array_header", "*2\r\n*488888888\r\n:0\r\n:8191\r\n");
}

void WriteThresholdFile(const fs::path& root) {
  CorpusWriter out(root, "threshold_file");
  out.Write("tuner_output",
            "# written by rplasma-bench-mpi --tune\n"
            "default 262144\n"
            "peer rank1 131072   # by node name\n"
            "peer rank2.3fa9c2d1 64KiB\n"
            "fit rank1 a=1.5 b=3\n"
            "sample rank1 65536 get_us=12 pin_us=30\n");
  out.Write("default_only", "default 1MiB\n");
  out.Write("units", "default 2M\npeer a 3K\npeer b 1GiB\tnote x\n");
  out.Write("size_line", "65536\ndefault 4096\n");
  out.Write("auto", "auto\n");
}

}  // namespace
}  // namespace rplasma

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  rplasma::WriteStoreFrames(root);
  rplasma::WriteManagerMessages(root);
  rplasma::WritePeerMessages(root);
  rplasma::WriteTcpWire(root);
#ifdef RPLASMA_WITH_VERBS
  rplasma::WriteVerbsWireFormat(root);
#endif
  rplasma::WritePeerAuth(root);
  rplasma::WriteDirectoryCodec(root);
  rplasma::WriteRedisClusterReplies(root);
  rplasma::WriteThresholdFile(root);
  return 0;
}
