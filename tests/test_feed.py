"""The live feed's fan-out: bounded clients, never blocking the writer, clean endings."""

from __future__ import annotations

import threading
import time

import pytest
from server_app import sse_events

from server.feed.hub import Feed, FeedFullError, Stream
from server.feed.messages import KEEPALIVE, sse


def test_sse_formats_one_event_on_single_lines() -> None:
    raw = sse("state", {"a": "line\nbreak"}, 7)
    assert raw == b'id: 7\nevent: state\ndata: {"a":"line\\nbreak"}\n\n'
    assert sse_events(raw) == [("7", "state", {"a": "line\nbreak"})]
    assert b"id:" not in sse("entry", [])


def test_messages_reach_every_subscriber_of_that_table_only() -> None:
    feed = Feed(max_clients=10)
    a, b, other = feed.subscribe("t"), feed.subscribe("t"), feed.subscribe("u")
    assert feed.publish("t", b"m1") == 2
    assert a.get(0.1) == b"m1"
    assert b.get(0.1) == b"m1"
    assert other.get(0.01) is None
    assert feed.stats().clients == 3


def test_the_number_of_clients_is_bounded_and_slots_come_back() -> None:
    feed = Feed(max_clients=2)
    s1 = feed.subscribe("t")
    feed.subscribe("u")
    with pytest.raises(FeedFullError, match="full"):
        feed.subscribe("t")
    feed.unsubscribe(s1)
    feed.unsubscribe(s1)  # twice is harmless
    feed.subscribe("t")
    assert feed.stats().clients == 2


def test_a_client_that_falls_behind_is_dropped_without_blocking_the_writer() -> None:
    feed = Feed(max_clients=5, queue_size=4)
    slow, fast = feed.subscribe("t"), feed.subscribe("t")
    start = time.perf_counter()
    for n in range(10):
        feed.publish("t", b"m%d" % n)
        assert fast.get(0.1) == b"m%d" % n  # the fast one keeps up
    assert time.perf_counter() - start < 1.0
    assert slow.dropped
    assert not fast.dropped
    stream = Stream(slow, [], keepalive_seconds=5)
    chunks = list(stream)  # its stream ends at once: it reconnects and catches up
    assert chunks == [b"retry: 2000\n\n"]
    assert feed.stats().dropped == 1
    assert feed.stats().clients == 1


def test_a_stream_sends_initial_then_live_then_keepalives() -> None:
    feed = Feed()
    sub = feed.subscribe("t")
    stream = Stream(sub, [b"first"], keepalive_seconds=0.05)
    assert next(stream).startswith(b"retry:")
    assert next(stream) == b"first"
    feed.publish("t", b"live")
    assert next(stream) == b"live"
    assert next(stream) == KEEPALIVE  # the table is quiet
    stream.close()
    assert feed.stats().clients == 0


def test_closing_a_stream_before_its_first_byte_frees_the_slot() -> None:
    feed = Feed(max_clients=1)
    stream = Stream(feed.subscribe("t"), [], keepalive_seconds=5)
    stream.close()  # the client went away before the response started
    feed.subscribe("t")


def test_closing_the_feed_ends_every_stream_and_refuses_new_ones() -> None:
    feed = Feed()
    stream = Stream(feed.subscribe("t"), [], keepalive_seconds=30)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.extend(stream))
    reader.start()
    time.sleep(0.05)
    feed.close()
    reader.join(timeout=5)
    assert not reader.is_alive()
    assert got == [b"retry: 2000\n\n"]
    with pytest.raises(FeedFullError, match="stopping"):
        feed.subscribe("t")
    assert feed.stats().clients == 0
