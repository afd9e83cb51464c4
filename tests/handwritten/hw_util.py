"""Checks shared by the handwritten-kernel tests."""

import contextlib

import pytest
import torch
import torch_fl

DEVICE = "flagos:2"  # where the tensors live
CURRENT = 0  # the thread's current device during the call

# The simulator's rejection of a launch on the wrong device.
MISMATCH = r"lives on device 2 but the launch runs on device 0"

needs_devices = pytest.mark.skipif(torch.flagos.device_count() < 4, reason="needs four flagos devices")


def on_device(*tensors, device=DEVICE):
    """Copies of CPU tensors on `device`; the counters are zeroed afterwards,
    so that they count only what the op under test does."""
    moved = tuple(t.to(device) for t in tensors)
    torch_fl.sim.reset_stats()
    return moved if len(moved) > 1 else moved[0]


def assert_clean(*results, ops=(), device=DEVICE):
    """The results live on `device`, the caller's current device is unchanged,
    the simulator rejected no launch, each of `ops` launched, every launch ran
    on `device`, and no op went through the CPU fallback."""
    for result in results:
        assert result.device == torch.device(device)
    assert torch.flagos.current_device() == CURRENT
    stats = torch_fl.sim.stats()
    assert stats["rejected_launches"] == 0
    for op in ops:
        assert stats["op_launches"].get(op, 0) >= 1, stats["op_launches"]
    index = torch.device(device).index
    assert sum(count for dev, count in stats["launches"].items() if dev != index) == 0, stats["launches"]
    assert stats["fallback_ops"] == {}


def assert_equal(actual, expected):
    assert actual.dtype == expected.dtype
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-5)


@contextlib.contextmanager
def rejected():
    """The block must fail in the simulator's launch validation: the kernel
    launched on the ambient device 0 while its tensors live on device 2."""
    with pytest.raises(RuntimeError, match=MISMATCH):
        yield
    assert torch_fl.sim.stats()["rejected_launches"] >= 1
    assert torch.flagos.current_device() == CURRENT


@contextlib.contextmanager
def strict():
    """CPU fallbacks refused (FLAGOS_STRICT): what the operator rejects raises,
    with the operator's own status, instead of running on the CPU."""
    before = torch_fl._C._strict()
    torch_fl._C._set_strict(True)
    try:
        yield
    finally:
        torch_fl._C._set_strict(before)
