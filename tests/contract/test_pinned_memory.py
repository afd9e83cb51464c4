"""Pinned host memory and non-blocking copies, as a torch.cuda user writes them: pin_memory(),
is_pinned(), pin_memory=True factories, DataLoader(pin_memory=True), .to(non_blocking=True) in
both directions. The backend's pinned allocator (aclrtMallocHost) sits behind PyTorch's
PrivateUse1 hooks. Ordering tests use lazy streams, where queued work runs only when something
waits for it, so that reading too early is visible."""

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


def test_pin_memory_and_is_pinned():
    x = torch.randn(4, 5)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and torch.equal(p, x)
    assert p.pin_memory().is_pinned()
    assert torch.empty(7, pin_memory=True).is_pinned()
    assert torch.zeros(3, 3, pin_memory=True).is_pinned()
    assert torch.randn(8, pin_memory=True).is_pinned()
    assert torch.empty(0, pin_memory=True).numel() == 0
    assert p[1:].is_pinned()  # a view of pinned memory is pinned
    with pytest.raises(RuntimeError, match="pin"):
        torch.empty(3, device="flagos").pin_memory()  # only CPU tensors can be pinned


def test_host_memory_stats_count_pinned_blocks():
    torch.flagos.reset_peak_host_memory_stats()
    before = torch.flagos.host_memory_stats()["active_requests.current"]
    p = torch.empty(1000, pin_memory=True)
    assert torch.flagos.host_memory_stats()["active_requests.current"] == before + 1
    del p
    assert torch.flagos.host_memory_stats()["active_requests.current"] == before
    torch.accelerator.empty_host_cache()


def test_non_blocking_host_to_device_from_pinned_memory():
    src = torch.arange(N, dtype=torch.float32).pin_memory()
    dst = src.to("flagos", non_blocking=True)
    y = dst * 2  # queued after the copy on the same stream
    assert torch.equal(y.cpu(), torch.arange(N, dtype=torch.float32) * 2)


def test_non_blocking_device_to_host_lands_in_pinned_memory_after_sync(lazy_streams):
    x = torch.full((N,), 3.0, device="flagos") * 2
    host = x.to("cpu", non_blocking=True)
    assert host.is_pinned()  # as on CUDA: the destination is pinned, so the copy can be queued
    done = torch.flagos.Event()
    done.record()
    assert not done.query()  # lazy streams: the copy has not run
    done.synchronize()
    assert torch.equal(host, torch.full((N,), 6.0))


def test_non_blocking_copy_into_a_pinned_tensor(lazy_streams):
    x = torch.full((N,), 5.0, device="flagos") + 1
    host = torch.empty(N, pin_memory=True)
    host.copy_(x, non_blocking=True)
    torch.flagos.current_stream().synchronize()
    assert torch.equal(host, torch.full((N,), 6.0))


def test_negative_control_reading_before_sync_sees_old_data(lazy_streams):
    # What the sync in the test above protects: the queued copy has not written the pinned buffer.
    x = torch.full((N,), 5.0, device="flagos") + 1
    host = torch.zeros(N, pin_memory=True)
    host.copy_(x, non_blocking=True)
    assert torch.equal(host, torch.zeros(N))
    torch.flagos.synchronize()
    assert torch.equal(host, torch.full((N,), 6.0))


def test_non_blocking_from_pageable_memory_is_a_safe_blocking_copy(lazy_streams):
    src = torch.full((N,), 4.0)  # not pinned: copied at once, so reusing `src` is safe
    dst = src.to("flagos", non_blocking=True)
    src.fill_(9)
    assert torch.equal(dst.cpu(), torch.full((N,), 4.0))
    out = torch.empty(N)
    out.copy_(dst, non_blocking=True)  # pageable destination: the host waits
    assert torch.equal(out, torch.full((N,), 4.0))


def test_pinned_buffer_freed_while_a_copy_reads_it_is_not_reused(lazy_streams):
    torch.accelerator.empty_host_cache()
    src = torch.full((N,), 1.5).pin_memory()
    dst = src.to("flagos", non_blocking=True)
    ptr = src.data_ptr()
    del src  # the queued copy still reads it
    other = torch.empty(N, pin_memory=True)
    assert other.data_ptr() != ptr
    other.fill_(7)
    assert torch.equal(dst.cpu(), torch.full((N,), 1.5))


def test_dataloader_pin_memory_and_non_blocking_transfer():
    data = torch.utils.data.TensorDataset(torch.arange(40.0).reshape(10, 4), torch.arange(10))
    loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    total = torch.zeros(4, device="flagos")
    for features, labels in loader:
        assert features.is_pinned() and labels.is_pinned()
        total += features.to("flagos", non_blocking=True).sum(0)
    assert torch.equal(total.cpu(), torch.arange(40.0).reshape(10, 4).sum(0))


def test_non_blocking_copies_between_flagos_devices():
    x = torch.arange(N, dtype=torch.float32, device="flagos:0") * 3
    y = x.to("flagos:1", non_blocking=True)
    x.fill_(0)  # after the copy: the source's stream waits for it
    assert torch.equal(y.cpu(), torch.arange(N, dtype=torch.float32) * 3)


def test_freed_pinned_blocks_are_cached_until_the_host_cache_is_emptied():
    """A freed block stays with the allocator (no aclrtFreeHost) and serves the next request of its
    size; empty_host_cache returns it to the runtime."""
    torch.accelerator.empty_host_cache()
    live = sim.stats()["live_pinned_allocations"]
    p = torch.empty(N, pin_memory=True)
    ptr = p.data_ptr()
    assert sim.stats()["live_pinned_allocations"] == live + 1
    del p
    assert sim.stats()["live_pinned_allocations"] == live + 1  # cached, not freed
    q = torch.empty(N, pin_memory=True)
    assert q.data_ptr() == ptr and sim.stats()["live_pinned_allocations"] == live + 1
    del q
    torch.accelerator.empty_host_cache()
    assert sim.stats()["live_pinned_allocations"] == live
