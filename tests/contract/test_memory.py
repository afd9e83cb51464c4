"""The memory API of torch.flagos and torch.accelerator, backed by the caching
allocator (a c10::DeviceAllocator), as a torch.cuda user calls it."""

from __future__ import annotations

import pytest
import torch

import torch_fl  # noqa: F401


def test_allocated_peak_and_reset_follow_tensors():
    device = 2
    torch.flagos.empty_cache()
    torch.flagos.reset_peak_memory_stats(device)
    before = torch.flagos.memory_allocated(device)
    x = torch.empty(1000, device=f"flagos:{device}")  # 4000 bytes, rounded to 4096
    assert torch.flagos.memory_allocated(device) == before + 4096
    assert torch.flagos.max_memory_allocated(device) >= before + 4096
    assert torch.flagos.memory_reserved(device) >= torch.flagos.memory_allocated(device)
    del x
    assert torch.flagos.memory_allocated(device) == before
    assert torch.flagos.max_memory_allocated(device) >= before + 4096  # the peak stays ...
    torch.flagos.reset_peak_memory_stats(device)
    assert torch.flagos.max_memory_allocated(device) == before  # ... until reset
    reserved = torch.flagos.memory_reserved(device)
    torch.flagos.empty_cache()
    assert torch.flagos.memory_reserved(device) < reserved


def test_memory_stats_use_cuda_names_and_count_allocations():
    stats = torch.flagos.memory_stats(1)
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
                "allocation.all.allocated", "segment.all.current", "num_alloc_retries", "num_ooms"):
        assert key in stats
    count = stats["allocation.all.allocated"]
    x = torch.empty(3, device="flagos:1")  # no launch, so no workspace either
    assert torch.flagos.memory_stats(1)["allocation.all.allocated"] == count + 1
    assert torch.flagos.memory_stats(1)["requested_bytes.all.current"] >= 12
    del x


def test_memory_summary_is_a_table():
    x = torch.ones(10, device="flagos:0")
    summary = torch.flagos.memory_summary(0)
    assert "flagos:0 caching allocator" in summary
    assert "Allocated memory" in summary and "Reserved memory" in summary
    del x


def test_accelerator_memory_api_reads_the_same_allocator():
    x = torch.ones(256, device="flagos:1")
    with torch.accelerator.device_index(1):
        assert torch.accelerator.memory_allocated() == torch.flagos.memory_allocated(1)
        assert torch.accelerator.max_memory_allocated() >= torch.accelerator.memory_allocated()
        assert torch.accelerator.memory_reserved() == torch.flagos.memory_reserved(1)
        torch.accelerator.reset_peak_memory_stats()
        torch.accelerator.empty_cache()
    assert torch.accelerator.memory_stats(1)["allocated_bytes.all.current"] == torch.flagos.memory_allocated(1)
    del x


def test_bad_device_index_raises():
    with pytest.raises(IndexError):
        torch.flagos.memory_allocated(99)
