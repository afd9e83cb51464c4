"""Device management and properties, as a torch.cuda user reads them: get_device_name,
get_device_properties, get_device_capability, mem_get_info, peer access, and the torch.cuda
names flagos does not provide (a clear AttributeError naming what is unsupported)."""

from __future__ import annotations

import pytest
import torch

import torch_fl  # noqa: F401


def test_device_properties():
    props = torch.flagos.get_device_properties(0)
    assert props.name == torch.flagos.get_device_name(0) == torch.flagos.get_device_name()
    assert props.name.startswith("Ascend")
    assert props.total_memory > 0 and props.multi_processor_count > 0
    assert (props.major, props.minor) == torch.flagos.get_device_capability(0)
    assert all(isinstance(v, int) for v in torch.flagos.get_device_capability("flagos:1"))
    assert torch.flagos.get_device_properties("flagos:3").total_memory == props.total_memory
    assert "total_memory=" in repr(props)
    with pytest.raises(IndexError, match="flagos device index 7 is out of range"):
        torch.flagos.get_device_properties(7)


def test_accelerator_device_capability_lists_dtypes():
    cap = torch.accelerator.get_device_capability("flagos:0")
    assert {torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool} <= cap["supported_dtypes"]


def test_mem_get_info_follows_allocations():
    torch.flagos.empty_cache()
    free, total = torch.flagos.mem_get_info(2)
    assert 0 < free <= total == torch.flagos.get_device_properties(2).total_memory
    assert torch.accelerator.get_memory_info(2) == torch.flagos.mem_get_info(2)
    x = torch.empty(64 << 20, dtype=torch.uint8, device="flagos:2")  # 64 MiB, a new runtime allocation
    assert torch.flagos.mem_get_info(2)[0] <= free - (64 << 20)
    del x
    torch.flagos.empty_cache()
    assert torch.flagos.mem_get_info(2)[0] >= free  # other tests' tensors may have gone meanwhile


def test_peer_access_and_device_of():
    assert torch.flagos.can_device_access_peer(0, 1)
    assert not torch.flagos.can_device_access_peer(1, 1)
    x = torch.ones(2, device="flagos:3")
    with torch.flagos.device_of(x):
        assert torch.flagos.current_device() == 3
    assert torch.flagos.current_device() == 0
    assert torch.flagos.is_initialized() and torch.flagos.is_available()
    torch.flagos.init()
    assert not torch.flagos.is_current_stream_capturing()


@pytest.mark.parametrize("name", ["graph", "CUDAGraph", "make_graphed_callables", "ExternalStream", "MemPool",
                                  "memory_snapshot", "set_per_process_memory_fraction", "nvtx", "utilization",
                                  "set_sync_debug_mode"])
def test_unsupported_torch_cuda_names_raise_a_clear_error(name):
    with pytest.raises(AttributeError, match=f"torch.flagos.{name} is not supported: .+"):
        getattr(torch.flagos, name)
    assert not hasattr(torch.flagos, name)


def test_accelerator_graph_is_a_clear_error():
    with pytest.raises(RuntimeError, match="Graph is not supported on device type: flagos"):
        torch.accelerator.Graph()


def test_deprecated_memory_names_and_unsupported_flags():
    x = torch.empty(1000, device="flagos:1")
    assert torch.flagos.memory_cached(1) == torch.flagos.memory_reserved(1)
    assert torch.flagos.max_memory_cached(1) == torch.flagos.max_memory_reserved(1)
    torch.flagos.reset_max_memory_allocated(1)
    assert torch.flagos.max_memory_allocated(1) == torch.flagos.memory_allocated(1)
    assert torch.flagos.OutOfMemoryError is torch.OutOfMemoryError
    assert torch.flagos.is_tf32_supported() is False
    with pytest.raises(RuntimeError, match=r"Event\(interprocess=True\) is not supported"):
        torch.flagos.Event(interprocess=True)
    del x


def test_out_of_memory_is_torch_out_of_memory_error():
    with pytest.raises(torch.flagos.OutOfMemoryError, match="flagos:0"):
        torch.empty(1 << 40, dtype=torch.uint8, device="flagos:0")
