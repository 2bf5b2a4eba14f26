"""Client.subscribe(): store events as an iterator."""

import pytest

import rplasma


def test_subscription_yields_existing_then_new_events(client):
    existing = client.put(b"before")
    with client.subscribe() as events:
        first = next(events)
        assert first.kind == "sealed" and first.id == existing
        assert events.next_event(timeout_ms=50) is None  # nothing else yet
        fresh = client.put(b"after", metadata=b"mm")
        event = next(events)
        assert event.kind == "sealed" and event.id == fresh
        assert event.object.data_size == 5 and event.object.metadata_size == 2
        client.delete(fresh)
        event = events.next_event(timeout_ms=5000)
        assert event is not None and event.kind == "deleted" and event.id == fresh
        client.evict(1)
        event = events.next_event(timeout_ms=5000)
        assert event is not None and event.kind == "evicted" and event.id == existing


def test_subscription_without_existing_objects_starts_empty(client):
    old = client.put(b"old")
    events = client.subscribe(include_existing=False)
    assert events.fileno() >= 0
    assert events.next_event(timeout_ms=50) is None
    new = client.put(b"new")
    assert events.next_event(timeout_ms=5000).id == new
    events.close()
    with pytest.raises(ValueError):
        events.next_event(timeout_ms=0)
    client.delete([old, new])


def test_iteration_stops_when_the_store_goes_away(workdir):
    from conftest import Store
    store = Store(workdir)
    c = rplasma.connect(store.socket_path)
    events = c.subscribe(include_existing=False)
    oid = c.put(b"x")
    seen = [next(events).id]
    assert store.stop() == 0
    seen += [e.id for e in events]  # ends (StopIteration) instead of waiting forever
    assert seen == [oid]
    with pytest.raises(rplasma.Unavailable):
        events.next_event(timeout_ms=0)
