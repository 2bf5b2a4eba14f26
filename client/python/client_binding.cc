// rplasma.Client and rplasma.connect: the Python face of client/client.h.
//
// Every call that talks to the store or the manager gives the GIL up for the exchange (other
// Python threads run meanwhile; the C++ client is thread-safe). Arguments are converted and
// results wrapped with the GIL held, before and after.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

#include "client/client.h"
#include "client/python/bindings.h"
#include "client/python/bytes_view.h"
#include "client/python/client_state.h"
#include "client/python/python_errors.h"
#include "client/python/read_buffer.h"
#include "client/python/subscription_binding.h"
#include "client/python/write_buffer.h"
#include "protocol/base/status.h"

namespace rplasma::python {

namespace py = pybind11;

namespace {

// Python's timeout_ms: negative waits forever, 0 does not wait.
absl::Duration Timeout(int64_t timeout_ms) {
  return timeout_ms < 0 ? absl::InfiniteDuration() : absl::Milliseconds(timeout_ms);
}

bool IsMissing(const absl::Status& status) {
  const ErrorCode code = ErrorCodeOf(status);
  return code == ErrorCode::kObjectNotFound || code == ErrorCode::kObjectNotSealed ||
         code == ErrorCode::kDeadlineExceeded;
}

class PyClient {
 public:
  explicit PyClient(ClientHandle state) : state_(std::move(state)) {}

  // The state for one call; a copy, so close() from another thread cannot pull it away mid-call.
  ClientHandle state() const {
    if (state_ == nullptr) throw py::value_error("rplasma client is closed");
    return state_;
  }
  // Drops this handle; buffers still alive keep the connection until they go.
  void Close() { state_.reset(); }
  bool closed() const { return state_ == nullptr; }

  ObjectID Put(py::handle object, std::optional<ObjectID> id, py::handle metadata) {
    ClientHandle state = this->state();
    BytesView data(object);
    BytesView meta(metadata);
    const ObjectID target = id ? *id : ObjectID::Random();
    absl::Status status;
    {
      py::gil_scoped_release nogil;
      status = state->client->Put(target, data.span(), meta.span());
    }
    ThrowIfError(status);
    return target;
  }

  std::unique_ptr<ReadBuffer> GetOne(const ObjectID& id, int64_t timeout_ms) {
    ClientHandle state = this->state();
    absl::StatusOr<ObjectBuffer> buffer;
    {
      py::gil_scoped_release nogil;
      buffer = state->client->GetOne(id, Timeout(timeout_ms));
    }
    return std::make_unique<ReadBuffer>(std::move(state), ValueOrThrow(std::move(buffer)));
  }

  py::list GetMany(const std::vector<ObjectID>& ids, int64_t timeout_ms) {
    ClientHandle state = this->state();
    absl::StatusOr<std::vector<ObjectBuffer>> buffers;
    {
      py::gil_scoped_release nogil;
      buffers = state->client->Get(ids, Timeout(timeout_ms));
    }
    std::vector<ObjectBuffer> entries = ValueOrThrow(std::move(buffers));
    // An entry failing for another reason than absence fails the call; the rest are released.
    for (const ObjectBuffer& entry : entries) {
      if (!entry.valid() && !IsMissing(entry.status())) throw StatusError(entry.status());
    }
    py::list out;
    for (ObjectBuffer& entry : entries) {
      if (!entry.valid()) {
        out.append(py::none());
        continue;
      }
      out.append(py::cast(new ReadBuffer(state, std::move(entry)), py::return_value_policy::take_ownership));
    }
    return out;
  }

  std::unique_ptr<WriteBuffer> Create(const ObjectID& id, uint64_t size, py::handle metadata, bool evict_if_full) {
    ClientHandle state = this->state();
    BytesView meta(metadata);
    absl::StatusOr<CreatedObject> created;
    {
      py::gil_scoped_release nogil;
      created = state->client->Create(id, size, meta.span(), evict_if_full);
    }
    return std::make_unique<WriteBuffer>(std::move(state), ValueOrThrow(std::move(created)));
  }

  // Seal/abort by id: through the object's MutableBuffer when this client created it (so its
  // export rules hold), else straight to the store, which answers why not.
  void Seal(const ObjectID& id) {
    ClientHandle state = this->state();
    if (auto it = state->open_writes.find(id); it != state->open_writes.end()) {
      // A new reference: the buffer cannot be collected while its Seal runs without the GIL.
      py::object keep = py::cast(it->second, py::return_value_policy::reference);
      keep.cast<WriteBuffer&>().Seal();
      return;
    }
    absl::Status status;
    {
      py::gil_scoped_release nogil;
      status = state->client->Seal(id);
      if (status.ok()) status = state->client->ReleaseDetached(id);
    }
    ThrowIfError(status);
  }

  void Abort(const ObjectID& id) {
    ClientHandle state = this->state();
    if (auto it = state->open_writes.find(id); it != state->open_writes.end()) {
      py::object keep = py::cast(it->second, py::return_value_policy::reference);
      keep.cast<WriteBuffer&>().Abort();
      return;
    }
    absl::Status status;
    {
      py::gil_scoped_release nogil;
      status = state->client->Abort(id);
    }
    ThrowIfError(status);
  }

  std::vector<bool> Contains(const std::vector<ObjectID>& ids) {
    ClientHandle state = this->state();
    absl::StatusOr<std::vector<bool>> present;
    {
      py::gil_scoped_release nogil;
      present = state->client->Contains(absl::Span<const ObjectID>(ids));
    }
    return ValueOrThrow(std::move(present));
  }

  void Delete(const std::vector<ObjectID>& ids) {
    ClientHandle state = this->state();
    absl::Status status;
    {
      py::gil_scoped_release nogil;
      status = state->client->Delete(ids);
    }
    ThrowIfError(status);
  }

  std::vector<ObjectInfo> List() {
    ClientHandle state = this->state();
    absl::StatusOr<std::vector<ObjectInfo>> objects;
    {
      py::gil_scoped_release nogil;
      objects = state->client->List();
    }
    return ValueOrThrow(std::move(objects));
  }

  py::dict Stats() {
    ClientHandle state = this->state();
    absl::StatusOr<StatsReply> reply;
    {
      py::gil_scoped_release nogil;
      reply = state->client->Stats();
    }
    const StatsReply stats = ValueOrThrow(std::move(reply));
    py::dict out;
    out["capacity"] = stats.capacity;
    out["used_bytes"] = stats.used_bytes;
    out["objects_created"] = stats.objects_created;
    out["objects_sealed"] = stats.objects_sealed;
    out["ref_count"] = stats.ref_count;
    out["clients"] = stats.clients;
    out["evictions"] = stats.evictions;
    out["evicted_bytes"] = stats.evicted_bytes;
    out["free_blocks"] = stats.free_blocks;
    out["largest_free_block"] = stats.largest_free_block;
    out["fragmentation"] = stats.fragmentation;
    out["waiting_gets"] = stats.waiting_gets;
    out["subscribers"] = stats.subscribers;
    out["indexed_objects"] = stats.indexed_objects;
    out["slot_references"] = stats.slot_references;
    out["reclaims_waiting"] = stats.reclaims_waiting;
    return out;
  }

  py::dict Evict(uint64_t bytes) {
    ClientHandle state = this->state();
    absl::StatusOr<EvictReply> reply;
    {
      py::gil_scoped_release nogil;
      reply = state->client->Evict(bytes);
    }
    const EvictReply evicted = ValueOrThrow(std::move(reply));
    py::dict out;
    out["bytes_evicted"] = evicted.bytes_evicted;
    out["objects_evicted"] = evicted.objects_evicted;
    return out;
  }

  void Fetch(const std::vector<ObjectID>& ids, int64_t timeout_ms, const std::optional<std::string>& hint,
             const std::optional<std::string>& protocol) {
    const std::optional<ForcedProtocol> forced = ForcedProtocolFromName(protocol.value_or("none"));
    if (!forced.has_value()) throw py::value_error("protocol: None, 'get' or 'pin'");
    ClientHandle state = this->state();
    absl::Status status;
    {
      py::gil_scoped_release nogil;
      status =
          state->client->Fetch(ids, absl::Milliseconds(std::max<int64_t>(timeout_ms, 0)), hint.value_or(""), *forced);
    }
    ThrowIfError(status);
  }

  std::string ManagerNodeId() {
    ClientHandle state = this->state();
    absl::StatusOr<std::string> node_id;
    {
      py::gil_scoped_release nogil;
      node_id = state->client->ManagerNodeId();
    }
    return ValueOrThrow(std::move(node_id));
  }

  std::string ManagerStats() {
    ClientHandle state = this->state();
    absl::StatusOr<std::string> json;
    {
      py::gil_scoped_release nogil;
      json = state->client->ManagerStats();
    }
    return ValueOrThrow(std::move(json));
  }

  std::unique_ptr<PySubscription> Subscribe(bool include_existing) {
    ClientHandle state = this->state();
    absl::StatusOr<std::unique_ptr<Subscription>> subscription;
    {
      py::gil_scoped_release nogil;
      subscription = state->client->Subscribe(include_existing);
    }
    return std::make_unique<PySubscription>(ValueOrThrow(std::move(subscription)));
  }

 private:
  ClientHandle state_;  // null once closed
};

PyClient Connect(const std::string& store_socket, std::optional<std::string> manager_socket,
                 const std::string& client_name, int64_t connect_timeout_ms, bool get_fetches_remote) {
  ClientOptions options;
  options.store_socket = store_socket;
  options.manager_socket = manager_socket.value_or("");
  options.client_name = client_name;
  options.connect_timeout = absl::Milliseconds(connect_timeout_ms);
  options.get_fetches_remote = get_fetches_remote;
  absl::StatusOr<std::unique_ptr<Client>> client;
  {
    py::gil_scoped_release nogil;
    client = Client::Connect(options);
  }
  return PyClient(MakeClientHandle(ValueOrThrow(std::move(client))));
}

}  // namespace

void RegisterClient(py::module_& module) {
  py::class_<PyClient>(module, "Client", "A connection to the local rplasma-store (see rplasma.connect).")
      .def("put", &PyClient::Put, py::arg("obj"), py::arg("object_id") = py::none(), py::arg("metadata") = py::bytes(),
           "Stores a bytes-like object or C-contiguous numpy array (one copy, into the arena) and seals it. "
           "Returns its ObjectID (random unless given).")
      .def("get", &PyClient::GetOne, py::arg("object_id"), py::arg("timeout_ms") = 0,
           "A Buffer over the sealed object; waits up to timeout_ms (negative: forever) for it to be sealed. "
           "ObjectNotFound / DeadlineExceeded if it is not there.")
      .def("get", &PyClient::GetMany, py::arg("object_ids"), py::arg("timeout_ms") = 0,
           "One Buffer per id, in order; None for an id still missing after timeout_ms.")
      .def("create", &PyClient::Create, py::arg("object_id"), py::arg("size"), py::arg("metadata") = py::bytes(),
           py::arg("evict_if_full") = true, "A MutableBuffer of `size` bytes to fill, then seal() or abort().")
      .def("seal", &PyClient::Seal, py::arg("object_id"))
      .def("abort", &PyClient::Abort, py::arg("object_id"))
      .def(
          "contains", [](PyClient& c, const ObjectID& id) -> bool { return c.Contains({id})[0]; }, py::arg("object_id"),
          "True if the object is present and sealed.")
      .def("contains", &PyClient::Contains, py::arg("object_ids"))
      .def(
          "delete", [](PyClient& c, const ObjectID& id) { c.Delete({id}); }, py::arg("object_id"),
          "Deletes the object (when its last reference goes, if referenced).")
      .def("delete", &PyClient::Delete, py::arg("object_ids"))
      .def("list", &PyClient::List, "Every object in the store, as ObjectInfo.")
      .def("stats", &PyClient::Stats, "The store's counters, as a dict.")
      .def("evict", &PyClient::Evict, py::arg("bytes"))
      .def(
          "fetch",
          [](PyClient& c, const ObjectID& id, int64_t timeout_ms, const std::optional<std::string>& hint,
             const std::optional<std::string>& protocol) { c.Fetch({id}, timeout_ms, hint, protocol); },
          py::arg("object_id"), py::arg("timeout_ms") = 10000, py::arg("hint") = py::none(),
          py::arg("protocol") = py::none(),
          "Asks the local manager (connect's manager_socket) to bring the object from another node; "
          "hint: the node id (manager_node_id() there) that probably holds it, tried first; protocol: "
          "None (the manager's choice), 'get' or 'pin'.")
      .def("fetch", &PyClient::Fetch, py::arg("object_ids"), py::arg("timeout_ms") = 10000,
           py::arg("hint") = py::none(), py::arg("protocol") = py::none())
      .def("manager_node_id", &PyClient::ManagerNodeId,
           "The local manager's node id: what a fetch on another node passes as hint.")
      .def("manager_stats", &PyClient::ManagerStats,
           "The local manager's stats document, as JSON text (docs/MANAGER.md).")
      .def("subscribe", &PyClient::Subscribe, py::arg("include_existing") = true,
           "A Subscription (its own connection): an iterator of ObjectEvents.")
      .def_property_readonly("store_name", [](const PyClient& c) { return c.state()->client->store_name(); })
      .def_property_readonly("arena_size", [](const PyClient& c) { return c.state()->client->arena_size(); })
      .def_property_readonly("closed", &PyClient::closed)
      .def("close", &PyClient::Close, "Drops the connection once no Buffer of it is left.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyClient& c, py::args) { c.Close(); });

  module.def("connect", &Connect, py::arg("store_socket"), py::arg("manager_socket") = py::none(),
             py::arg("client_name") = "python", py::arg("connect_timeout_ms") = 10000,
             py::arg("get_fetches_remote") = false,
             "Connects to the rplasma-store at store_socket (and, for fetch, the manager's client socket).");
}

}  // namespace rplasma::python
