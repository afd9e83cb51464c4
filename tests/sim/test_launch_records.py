"""The simulator's launch records (fsimRecordLaunches, flagos_sim.h): what the
profiler plugin reads. Work queued while recording is recorded once it has
run, with its device, stream, times on CLOCK_REALTIME and the queuing
thread's correlation id; work queued while not recording is not."""

import ctypes
import time

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")


class Record(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int32), ("device", ctypes.c_int32),
                ("stream", ctypes.c_void_p), ("correlation", ctypes.c_uint64), ("startNs", ctypes.c_int64),
                ("endNs", ctypes.c_int64)]


@pytest.fixture
def lib():
    lib = torch_fl.sim._lib()
    lib.fsimRecordLaunches.argtypes = [ctypes.c_int32]
    lib.fsimPushCorrelationId.argtypes = [ctypes.c_uint64]
    lib.fsimTakeLaunchRecords.argtypes = [ctypes.POINTER(Record), ctypes.c_size_t]
    lib.fsimTakeLaunchRecords.restype = ctypes.c_size_t
    yield lib
    lib.fsimRecordLaunches(0)


def take(lib):
    torch_fl.sim.drain_streams()
    out = (Record * 256)()
    n = lib.fsimTakeLaunchRecords(out, 256)
    return [out[i] for i in range(n)]


def test_recorded_launches_carry_device_stream_time_and_correlation(lib):
    x = torch.ones(4, device="flagos:0")
    y = torch.ones(4, device="flagos:1")
    torch_fl.sim.drain_streams()
    before = time.time_ns()
    lib.fsimRecordLaunches(1)
    lib.fsimPushCorrelationId(41)
    x.add_(1)
    lib.fsimPushCorrelationId(42)
    y.mul_(2)
    lib.fsimPopCorrelationId()
    lib.fsimPopCorrelationId()
    x.add_(1)
    lib.fsimRecordLaunches(0)
    records = take(lib)
    after = time.time_ns()
    # Per stream, in the order they were queued.
    ran = sorted((r for r in records if r.kind == 0), key=lambda r: (r.device, r.startNs))
    assert [(r.device, r.name, r.correlation) for r in ran] == [
        (0, b"aclnnInplaceAdds", 41), (0, b"aclnnInplaceAdds", 0), (1, b"aclnnInplaceMuls", 42)]
    for r in records:
        assert before <= r.startNs <= r.endNs <= after  # CLOCK_REALTIME, as time.time_ns
        assert r.stream  # the backend queues on its own streams, never the default handle
    assert take(lib) == []  # taken once


def test_nothing_is_recorded_when_off(lib):
    x = torch.ones(4, device="flagos:0")
    torch_fl.sim.drain_streams()
    x.add_(1)
    assert take(lib) == []
    lib.fsimRecordLaunches(1)
    x.add_(1)
    lib.fsimRecordLaunches(0)
    x.add_(1)
    assert [r.name for r in take(lib)] == [b"aclnnInplaceAdds"]


def test_async_copies_are_recorded_as_copies(lib):
    x = torch.ones(4, device="flagos:0")
    torch_fl.sim.drain_streams()
    lib.fsimRecordLaunches(1)
    x.to("flagos:1")
    lib.fsimRecordLaunches(0)
    kinds = {r.kind for r in take(lib)}
    assert 1 in kinds, kinds  # FSIM_RECORD_MEMCPY


def test_an_id_pushed_before_recording_started_tags_nothing(lib):
    x = torch.ones(4, device="flagos:0")
    torch_fl.sim.drain_streams()
    lib.fsimRecordLaunches(1)
    lib.fsimPushCorrelationId(7)  # a profile that stops inside its op: never popped
    lib.fsimRecordLaunches(0)
    lib.fsimRecordLaunches(1)  # the next profile
    x.add_(1)
    lib.fsimPushCorrelationId(8)
    x.add_(1)
    lib.fsimPopCorrelationId()
    lib.fsimPopCorrelationId()
    lib.fsimRecordLaunches(0)
    assert [r.correlation for r in take(lib)] == [0, 8]
