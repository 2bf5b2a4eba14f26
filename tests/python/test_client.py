"""Client against a real rplasma-store: put/get, create/seal/abort, queries and errors."""

import threading
import time

import pytest

import rplasma

from conftest import held_references


def test_put_then_get_returns_the_bytes_and_metadata(client):
    oid = client.put(b"hello plasma", metadata=b"meta")
    with client.get(oid) as buf:
        assert bytes(memoryview(buf)) == b"hello plasma"
        assert len(buf) == buf.size == 12
        assert buf.metadata == b"meta"
        assert buf.id == oid
    assert buf.released
    client.delete(oid)


def test_put_accepts_any_bytes_like_object_and_a_given_id(client):
    oid = rplasma.ObjectID.from_label("test_put_accepts")
    assert client.put(bytearray(b"abc"), object_id=oid) == oid
    other = client.put(memoryview(b"xyzw")[1:3])
    assert bytes(memoryview(client.get(oid))) == b"abc"
    assert bytes(memoryview(client.get(other))) == b"yz"
    client.delete([oid, other])


def test_put_of_a_large_object_goes_through_create_and_seal(client):
    data = bytes(range(256)) * (1 << 14)  # 4 MiB: above the inline limit, hashed in parallel
    oid = client.put(data)
    buf = client.get(oid)
    assert memoryview(buf) == data
    assert buf.checksum != 0
    buf.release()
    client.delete(oid)


def test_put_of_something_without_the_buffer_protocol_is_a_type_error(client):
    with pytest.raises(TypeError):
        client.put("a str is not bytes")


def test_put_of_an_existing_id_raises_object_exists(client):
    oid = client.put(b"x")
    with pytest.raises(rplasma.ObjectExists):
        client.put(b"y", object_id=oid)
    client.delete(oid)


def test_get_of_a_missing_id_raises_object_not_found(client):
    with pytest.raises(rplasma.ObjectNotFound) as error:
        client.get(rplasma.ObjectID.random())
    assert isinstance(error.value, rplasma.Error)
    assert error.value.code == 2


def test_get_with_a_timeout_of_an_id_never_sealed_raises_deadline_exceeded(client):
    start = time.monotonic()
    with pytest.raises(rplasma.Timeout):
        client.get(rplasma.ObjectID.random(), timeout_ms=100)
    assert time.monotonic() - start >= 0.09


def test_get_waits_for_an_object_sealed_by_another_thread(client):
    oid = rplasma.ObjectID.random()
    started = threading.Event()

    def writer():
        started.wait()
        time.sleep(0.05)  # so the get below is already waiting (it holds no GIL while it does)
        client.put(b"late", object_id=oid)

    t = threading.Thread(target=writer)
    t.start()
    started.set()
    buf = client.get(oid, timeout_ms=10000)
    t.join()
    assert bytes(memoryview(buf)) == b"late"
    buf.release()
    client.delete(oid)


def test_get_of_a_list_returns_buffers_in_order_and_none_for_missing(client):
    a = client.put(b"a")
    b = client.put(b"bb")
    missing = rplasma.ObjectID.random()
    bufs = client.get([b, missing, a])
    assert bufs[1] is None
    assert [bytes(memoryview(x)) for x in (bufs[0], bufs[2])] == [b"bb", b"a"]
    assert held_references(client.stats()) == 2
    del bufs  # dropping the buffers releases their references
    client.delete([a, b])


def test_create_write_seal_publishes_the_object(client):
    oid = rplasma.ObjectID.random()
    buf = client.create(oid, 5, metadata=b"m")
    assert buf.state == "open" and len(buf) == 5
    assert not client.contains(oid)  # created, not sealed
    with memoryview(buf) as view:
        view[:] = b"12345"
    client.seal(oid)
    assert buf.state == "sealed"
    assert client.contains(oid)
    got = client.get(oid)
    assert bytes(memoryview(got)) == b"12345" and got.metadata == b"m"
    got.release()
    client.delete(oid)


def test_seal_through_the_buffer_and_writes_after_seal_are_refused(client):
    buf = client.create(rplasma.ObjectID.random(), 3)
    memoryview(buf)[:] = b"abc"
    buf.seal()
    with pytest.raises(BufferError):
        memoryview(buf)
    with pytest.raises(ValueError):
        buf.seal()
    client.delete(buf.id)


def test_seal_while_a_writable_view_is_exported_raises_buffer_error(client):
    buf = client.create(rplasma.ObjectID.random(), 3)
    view = memoryview(buf)
    with pytest.raises(BufferError):
        client.seal(buf.id)
    with pytest.raises(BufferError):
        buf.abort()
    view.release()
    buf.abort()
    assert buf.state == "aborted"


def test_abort_discards_the_object(client):
    oid = rplasma.ObjectID.random()
    buf = client.create(oid, 16)
    client.abort(oid)
    assert buf.state == "aborted"
    assert not client.contains(oid)
    with pytest.raises(rplasma.ObjectNotFound):
        client.abort(oid)


def test_a_created_buffer_dropped_without_seal_is_aborted(client):
    oid = rplasma.ObjectID.random()
    buf = client.create(oid, 16)
    del buf
    assert client.stats()["objects_created"] == 0
    client.put(b"reused id", object_id=oid)  # the id is free again
    client.delete(oid)


def test_create_of_more_than_the_arena_raises_out_of_memory(client):
    with pytest.raises(rplasma.OutOfMemory):
        client.create(rplasma.ObjectID.random(), 1 << 30)


def test_contains_delete_and_list(client):
    a = client.put(b"1")
    b = client.put(b"22", metadata=b"x")
    assert client.contains(a)
    assert client.contains([a, rplasma.ObjectID.random(), b]) == [True, False, True]
    infos = {info.id: info for info in client.list()}
    assert set(infos) == {a, b}
    assert infos[b].state == "sealed" and infos[b].data_size == 2 and infos[b].metadata_size == 1
    client.delete(a)
    assert not client.contains(a)
    assert [info.id for info in client.list()] == [b]
    client.delete([b])
    assert client.list() == []


def test_delete_of_a_referenced_object_happens_when_the_reference_goes(client):
    oid = client.put(b"held")
    buf = client.get(oid)
    client.delete(oid)
    assert bytes(memoryview(buf)) == b"held"  # still readable while referenced
    buf.release()
    assert not client.contains(oid)


def test_stats_count_objects_and_references(client):
    before = client.stats()
    oid = client.put(b"x" * 100)
    buf = client.get(oid)
    stats = client.stats()
    assert stats["objects_sealed"] == before["objects_sealed"] + 1
    assert held_references(stats) == held_references(before) + 1
    assert stats["used_bytes"] > before["used_bytes"]
    assert stats["capacity"] == 64 << 20
    buf.release()
    client.delete(oid)


def test_evict_frees_unreferenced_objects(client):
    oid = client.put(b"e" * 1000)
    evicted = client.evict(1)
    assert evicted["objects_evicted"] == 1 and evicted["bytes_evicted"] >= 1000
    assert not client.contains(oid)


def test_fetch_without_a_manager_socket_is_invalid_argument(client):
    with pytest.raises(rplasma.InvalidArgument):
        client.fetch(rplasma.ObjectID.random())


def test_a_closed_client_refuses_calls(store):
    c = rplasma.connect(store.socket_path)
    c.close()
    assert c.closed
    with pytest.raises(ValueError):
        c.put(b"x")


def test_connect_to_a_missing_socket_raises_unavailable(workdir):
    with pytest.raises(rplasma.Error) as error:
        rplasma.connect(workdir + "/nothing.sock", connect_timeout_ms=1000)
    assert isinstance(error.value, rplasma.Unavailable), type(error.value)


def test_blocking_calls_release_the_gil(client):
    """A get waiting on the store must let other Python threads run meanwhile."""
    oid = rplasma.ObjectID.random()
    done = threading.Event()
    ticks = []

    def waiter():
        with pytest.raises(rplasma.Timeout):
            client.get(oid, timeout_ms=500)
        done.set()

    t = threading.Thread(target=waiter)
    t.start()
    while not done.is_set():
        ticks.append(time.monotonic())
        time.sleep(0.005)
    t.join()
    assert len(ticks) > 20, "the main thread did not run while get() waited"
