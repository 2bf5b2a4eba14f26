"""A two-node fetch from Python: two stores, two managers over tcp, and a private redis-server."""

import json
import os

import numpy as np
import pytest

import rplasma
from conftest import Manager, Redis, Store, wait_for, write_secret


@pytest.fixture
def two_nodes(workdir):
    directory = workdir
    redis = Redis(directory)
    secret = os.path.join(directory, "peer.secret")
    write_secret(secret)
    processes = [redis]
    nodes = []
    try:
        for name in ("a", "b"):
            store = Store(directory, name=f"{name}.store")
            processes.append(store)
            manager = Manager(directory, name, store, redis, secret)
            processes.append(manager)
            nodes.append(rplasma.connect(store.socket_path, manager.client_socket, client_name=f"pytest {name}"))
        yield nodes
    finally:
        for c in nodes:
            c.close()
        for p in reversed(processes):
            p.stop()


def test_fetch_brings_an_object_from_the_other_node(two_nodes):
    a, b = two_nodes
    array = np.random.default_rng(7).integers(0, 1 << 60, size=300_000, dtype=np.int64)  # 2.4 MB: pinned, not inline
    small = b"a small object travels in the lookup reply"
    big_id = a.put(array, metadata=b"int64")
    small_id = a.put(small)
    assert not b.contains(big_id)

    # The owner's manager publishes the new objects to Redis asynchronously: wait until B can find them.
    def fetched():
        try:
            b.fetch([big_id, small_id], timeout_ms=5000)
            return True
        except (rplasma.ObjectNotFound, rplasma.Timeout):
            return False

    wait_for(fetched, 30, "B could not fetch the objects A published")
    assert b.contains([big_id, small_id]) == [True, True]
    got = b.get(big_id)
    np.testing.assert_array_equal(np.frombuffer(got, dtype=np.int64), array)
    assert got.metadata == b"int64"
    assert got.checksum == a.get(big_id).checksum
    got.release()
    assert bytes(memoryview(b.get(small_id))) == small
    b.fetch(small_id)  # already here: a no-op
    for c in (a, b):
        c.delete([big_id, small_id])


def test_fetch_of_an_id_no_node_has_times_out(two_nodes):
    _, b = two_nodes
    missing = rplasma.ObjectID.random()
    with pytest.raises(rplasma.Timeout, match=missing.hex()):  # the manager waits for it to appear
        b.fetch(missing, timeout_ms=300)
    with pytest.raises(rplasma.ObjectNotFound):
        b.get(missing)


def test_a_hinted_fetch_names_the_producer_and_a_bad_hint_is_refused(two_nodes):
    a, b = two_nodes
    producer = a.manager_node_id()
    assert producer and producer != b.manager_node_id()
    payload = b"produced on A, consumed on B at once"
    object_id = a.put(payload)
    b.fetch(object_id, timeout_ms=10_000, hint=producer)  # no wait for the directory
    assert bytes(memoryview(b.get(object_id))) == payload
    b.delete([object_id])
    b.fetch([object_id], timeout_ms=10_000, hint=b.manager_node_id())  # a hint naming B itself is ignored
    assert b.contains(object_id)
    with pytest.raises(rplasma.InvalidArgument, match="node id"):
        b.fetch(object_id, hint="not a node id!")
    for c in (a, b):
        c.delete([object_id])


def test_a_fetch_may_force_the_peer_protocol_and_an_unknown_one_is_refused(two_nodes):
    a, b = two_nodes
    producer = a.manager_node_id()
    payload = b"small enough to go inline, read by Pin instead"
    object_id = a.put(payload)
    b.fetch(object_id, timeout_ms=10_000, hint=producer, protocol="pin")
    assert bytes(memoryview(b.get(object_id))) == payload
    pin = json.loads(b.manager_stats())["by_protocol"]["pin"]
    assert pin["objects"] == 1 and pin["forced_objects"] == 1
    with pytest.raises(ValueError, match="protocol"):
        b.fetch(object_id, protocol="rdma")
    for c in (a, b):
        c.delete([object_id])
