"""torch.flagos.Stream / Event and torch.accelerator's stream API, as a torch.cuda user writes them.

Streams are asynchronous (docs/streams.md). Ordering tests run with lazy streams where the
point is that work has *not* run yet (queued work runs only when something waits for it), so
that a missing wait gives wrong values deterministically; each has a negative control that drops
the user's wait and must see wrong values or a reported hazard."""

from __future__ import annotations

import pytest
import torch

import torch_fl  # noqa: F401
from torch_fl import sim

N = 1 << 14


@pytest.fixture
def lazy_streams():
    sim.set_stream_mode("lazy")
    yield
    sim.drain_streams()
    sim.set_stream_mode("async")


def test_stream_classes_and_current_stream():
    s = torch.flagos.Stream()
    assert isinstance(s, torch.Stream) and s.device == torch.device("flagos", 0)
    assert torch.flagos.current_stream() == torch.flagos.default_stream()
    assert torch.flagos.current_stream().stream_id == 0
    s1 = torch.flagos.Stream(device="flagos:1")
    assert s1.device_index == 1 and s1 != torch.flagos.default_stream(1)
    with torch.flagos.stream(s1):
        # as torch.cuda.stream: the stream's device becomes current too
        assert torch.flagos.current_device() == 1
        assert torch.flagos.current_stream() == s1
        assert torch.accelerator.current_stream() == s1
    assert torch.flagos.current_device() == 0
    assert torch.flagos.current_stream(1) == torch.flagos.default_stream(1)
    with s:  # torch.Stream's own context manager
        assert torch.flagos.current_stream() == s
    assert torch.flagos.current_stream() == torch.flagos.default_stream()
    with torch.flagos.stream(None):
        assert torch.flagos.current_stream() == torch.flagos.default_stream()


def test_set_stream_and_accelerator_set_stream():
    s = torch.flagos.Stream(1)
    try:
        torch.flagos.set_stream(s)
        assert torch.flagos.current_device() == 1 and torch.flagos.current_stream() == s
    finally:
        torch.flagos.set_stream(torch.flagos.default_stream(1))
        torch.flagos.set_device(0)
    s0 = torch.Stream(device="flagos")
    torch.accelerator.set_stream(s0)
    try:
        assert torch.flagos.current_stream(0) == s0
    finally:
        torch.accelerator.set_stream(torch.flagos.default_stream(0))


def test_streams_can_be_created_in_a_loop():
    # torch.cuda.Stream() hands out pool streams round-robin; a loop must not run out.
    streams = [torch.flagos.Stream() for _ in range(100)]
    x = torch.ones(8, device="flagos")
    for s in streams[-3:]:
        s.wait_stream(torch.flagos.current_stream())
        with torch.flagos.stream(s):
            x = x + 1
        torch.flagos.current_stream().wait_stream(s)
    assert x.cpu().tolist() == [4.0] * 8


def test_side_stream_with_wait_stream_gives_right_values(lazy_streams):
    # The torch.cuda idiom: the side stream waits for the producer, the consumer waits for the side stream.
    side = torch.flagos.Stream()
    x = torch.full((N,), 2.0, device="flagos") * 3
    side.wait_stream(torch.flagos.current_stream())
    with torch.flagos.stream(side):
        y = x + 1
    torch.flagos.current_stream().wait_stream(side)
    x.record_stream(side)
    assert torch.equal(y.cpu(), torch.full((N,), 7.0))
    assert sim.hazard_report() == []


def test_negative_control_side_stream_without_wait_is_caught(lazy_streams, hazards):
    side = torch.flagos.Stream()
    torch.flagos.empty_cache()
    x = torch.full((N,), 2.0, device="flagos") * 3
    with torch.flagos.stream(side):  # no side.wait_stream(current): reads x before it is written
        y = x + 1
    side.synchronize()
    values = y.cpu()
    assert not torch.equal(values, torch.full((N,), 7.0))
    assert any("with nothing ordering the two" in r for r in hazards())


def test_events_order_streams_across_devices(lazy_streams):
    x = torch.full((N,), 2.0, device="flagos:1") * 5
    done = torch.flagos.Event()
    done.record(torch.flagos.current_stream(1))
    consumer = torch.flagos.Stream(1)
    consumer.wait_event(done)
    with torch.flagos.stream(consumer):
        y = x - 1
    assert not done.query()  # lazy: nothing has waited for it yet
    done.synchronize()
    assert done.query()
    consumer.synchronize()
    assert consumer.query()
    assert torch.equal(y.cpu(), torch.full((N,), 9.0))


def test_event_wait_and_stream_record_event():
    s = torch.flagos.Stream()
    with torch.flagos.stream(s):
        x = torch.arange(16.0, device="flagos") * 2
    e = s.record_event()
    assert isinstance(e, torch.flagos.Event) and isinstance(e, torch.Event)
    e.wait(torch.flagos.current_stream())
    x.record_stream(torch.flagos.current_stream())
    assert x.cpu().tolist() == [2.0 * i for i in range(16)]


def test_query_is_false_while_work_is_queued(lazy_streams):
    s = torch.flagos.Stream()
    with torch.flagos.stream(s):
        x = torch.ones(N, device="flagos") * 2
    assert not s.query()  # lazy: nothing has waited for it yet
    e = s.record_event()
    assert not e.query()
    s.synchronize()
    assert s.query() and e.query()
    x.record_stream(torch.flagos.current_stream())
    torch.flagos.current_stream().wait_stream(s)
    assert x.sum().item() == 2 * N


def test_timing_events_elapsed_time():
    start = torch.flagos.Event(enable_timing=True)
    end = torch.flagos.Event(enable_timing=True)
    a = torch.randn(64, 64, device="flagos")
    start.record()
    for _ in range(5):
        a = a @ a.T / 64
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    # torch.Event (torch.accelerator's) times the same way
    s = torch.Event(device="flagos", enable_timing=True)
    t = torch.Event(device="flagos", enable_timing=True)
    s.record()
    t.record()
    t.synchronize()
    assert s.elapsed_time(t) >= 0.0


def test_elapsed_time_without_timing_is_a_clear_error():
    a, b = torch.flagos.Event(), torch.flagos.Event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(ValueError, match="enable_timing"):
        a.elapsed_time(b)


def test_synchronize_forms():
    x = torch.ones(N, device="flagos:2") * 2
    torch.flagos.synchronize(2)
    torch.flagos.synchronize("flagos:2")
    torch.accelerator.synchronize(2)
    torch.flagos.current_stream(2).synchronize()
    assert torch.flagos.current_stream(2).query()
    del x


def test_record_stream_holds_the_block_until_the_stream_is_done(lazy_streams):
    side = torch.flagos.Stream()
    torch.flagos.empty_cache()
    x = torch.full((N,), 3.0, device="flagos")
    side.wait_stream(torch.flagos.current_stream())
    with torch.flagos.stream(side):
        y = x * 2
    x.record_stream(side)
    ptr = x.data_ptr()
    del x
    z = torch.empty(N, device="flagos")  # the same size on the same stream: not x's block yet
    assert z.data_ptr() != ptr
    side.synchronize()
    del z
    # The side stream is done: both blocks come back from the pool, without a new runtime allocation.
    device_allocs = torch.flagos.memory_stats()["num_device_alloc"]
    w1 = torch.empty(N, device="flagos")
    w2 = torch.empty(N, device="flagos")
    assert ptr in {w1.data_ptr(), w2.data_ptr()}
    assert torch.flagos.memory_stats()["num_device_alloc"] == device_allocs
    assert torch.equal(y.cpu(), torch.full((N,), 6.0))


def test_accelerator_stream_api():
    assert torch.accelerator.current_accelerator() == torch.device("flagos")
    s = torch.Stream(device="flagos:1")
    with torch.accelerator.device_index(1):
        prev = torch.accelerator.current_stream()
        torch.accelerator.set_stream(s)
        try:
            x = torch.ones(4, device="flagos:1") + 1
            e = torch.Event(device="flagos:1")
            e.record(s)
            e.synchronize()
            assert e.query()
        finally:
            torch.accelerator.set_stream(prev)
    torch.accelerator.synchronize()
    assert x.cpu().tolist() == [2.0] * 4


def test_bad_stream_use_is_a_clear_error():
    with pytest.raises(ValueError, match="flagos stream"):
        torch.flagos.stream(torch.Stream(device="cpu"))
    with pytest.raises(IndexError, match="flagos device index 9 is out of range"):
        torch.flagos.Stream(device=9)
    with pytest.raises(IndexError, match="flagos device index 9 is out of range"):
        torch.Stream(device="flagos:9")
    e = torch.flagos.Event()
    e.record(torch.flagos.current_stream(0))  # as torch.cuda.Event: the first record binds the device
    with pytest.raises(RuntimeError, match="an event of flagos:0 cannot be recorded on a stream of flagos:1"):
        e.record(torch.flagos.current_stream(1))
