"""Zero-copy buffers: the buffer protocol, numpy, and the lifetime rules (docs/PYTHON.md)."""

import gc
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import rplasma

from conftest import held_references


def test_numpy_array_round_trip(client):
    array = np.arange(100_000, dtype=np.float64).reshape(100, 1000)
    oid = client.put(array)
    buf = client.get(oid)
    view = np.frombuffer(buf, dtype=np.float64).reshape(100, 1000)
    np.testing.assert_array_equal(view, array)
    assert not view.flags.writeable
    del view
    buf.release()
    client.delete(oid)


def test_numpy_views_are_zero_copy_views_of_the_arena(client):
    oid = client.put(np.zeros(1024, dtype=np.uint8))
    buf = client.get(oid)
    a = np.frombuffer(buf, dtype=np.uint8)
    b = np.frombuffer(buf, dtype=np.uint8)
    # Both arrays point at the same bytes: the buffer's address in the arena, not copies.
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    assert memoryview(buf).readonly
    with pytest.raises(ValueError):
        a[0] = 1
    del a, b
    buf.release()
    client.delete(oid)


def test_writes_through_a_mutable_buffer_land_in_the_object(client):
    oid = rplasma.ObjectID.random()
    mbuf = client.create(oid, 8 * 1000)
    target = np.frombuffer(mbuf, dtype=np.int64)
    target[:] = np.arange(1000)
    del target
    mbuf.seal()
    got = client.get(oid)
    np.testing.assert_array_equal(np.frombuffer(got, dtype=np.int64), np.arange(1000))
    got.release()
    client.delete(oid)


def test_non_contiguous_buffers_are_refused(client):
    with pytest.raises(ValueError, match="C-contiguous"):  # numpy's own refusal
        client.put(np.arange(100).reshape(10, 10)[:, ::2])
    with pytest.raises(BufferError):
        client.put(memoryview(b"abcdef")[::2])
    assert client.list() == []


def test_release_while_a_view_is_exported_raises_buffer_error(client):
    oid = client.put(b"x" * 64)
    buf = client.get(oid)
    view = np.frombuffer(buf, dtype=np.uint8)
    mv = memoryview(buf)
    assert buf.exports == 2
    with pytest.raises(BufferError):
        buf.release()
    assert held_references(client.stats()) == 1  # the reference is still held
    mv.release()
    with pytest.raises(BufferError):
        buf.release()
    del view
    assert buf.exports == 0
    buf.release()
    assert held_references(client.stats()) == 0
    with pytest.raises(BufferError):
        memoryview(buf)  # nothing to view after release
    buf.release()  # idempotent
    client.delete(oid)


def test_a_view_keeps_the_reference_after_the_buffer_object_is_dropped(client):
    oid = client.put(np.arange(10, dtype=np.int32))
    view = np.frombuffer(client.get(oid), dtype=np.int32)
    gc.collect()
    assert held_references(client.stats()) == 1
    np.testing.assert_array_equal(view, np.arange(10))
    del view
    gc.collect()
    assert held_references(client.stats()) == 0
    client.delete(oid)


def test_a_view_keeps_the_mapping_after_the_client_is_closed(store):
    writer = rplasma.connect(store.socket_path)
    oid = writer.put(np.arange(1000, dtype=np.int64))
    reader = rplasma.connect(store.socket_path)
    view = np.frombuffer(reader.get(oid), dtype=np.int64)
    reader.close()
    del reader
    gc.collect()
    # The connection and the arena mapping live as long as the view does.
    np.testing.assert_array_equal(view, np.arange(1000))
    assert writer.stats()["clients"] == 2
    del view
    gc.collect()
    # The last view gone: the reader's connection closes and its reference goes with it.
    deadline = time.monotonic() + 5
    stats = writer.stats()
    while (stats["clients"], held_references(stats)) != (1, 0) and time.monotonic() < deadline:
        time.sleep(0.01)
        stats = writer.stats()
    assert (stats["clients"], held_references(stats)) == (1, 0)
    writer.delete(oid)
    writer.close()


def test_an_interpreter_exiting_with_live_views_exits_cleanly(store):
    script = textwrap.dedent(f"""
        import numpy as np, rplasma
        c = rplasma.connect({store.socket_path!r})
        oid = c.put(np.ones(1000))
        buf = c.get(oid)
        view = np.frombuffer(buf)
        pending = c.create(rplasma.ObjectID.random(), 100)
        sub = c.subscribe()
        print(oid.hex(), view.sum(), flush=True)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    hex_id, total = result.stdout.split()
    assert float(total) == 1000.0
    c = rplasma.connect(store.socket_path)
    oid = rplasma.ObjectID.from_hex(hex_id)
    assert c.contains(oid)
    c.delete(oid)
    stats = c.stats()
    assert held_references(stats) == 0 and stats["objects_created"] == 0 and stats["objects_sealed"] == 0
    c.close()
