"""Injected ACLNN failures inside a guarded op on a non-current device.

A failure in phase 1 (aclnnXGetWorkspaceSize) or phase 2 (aclnnX) raises a
RuntimeError naming the operator; the guard restores the caller's current
device on the way out, and the output and workspace allocated for the failed
op are released (memory_allocated returns to its level before the op). The
executor cache is switched off so that phase 1 runs on every call.
"""

from __future__ import annotations

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 3, reason="needs three flagos devices")

CURRENT, DEVICE = 0, 2

# (ACLNN operator, the op that launches it, how to call it on tensors x, y of DEVICE)
FAULTY_OPS = [
    ("aclnnAdd", "add.Tensor", lambda x, y: torch.add(x, y)),
    ("aclnnAdd", "add.out", lambda x, y: torch.add(x, y, out=torch.empty(0, device=x.device))),
    ("aclnnInplaceAdd", "add_.Tensor", lambda x, y: x.add_(y)),
    ("aclnnMul", "mul.Tensor", lambda x, y: x * y),
]


@pytest.fixture(autouse=True)
def no_executor_cache():
    torch_fl._C._set_executor_cache(False)
    yield
    torch_fl._C._set_executor_cache(True)


def allocated() -> dict[int, int]:
    return {d: torch.flagos.memory_allocated(d) for d in range(torch.flagos.device_count())}


@pytest.mark.parametrize("phase", [1, 2])
@pytest.mark.parametrize("aclnn,op,call", FAULTY_OPS, ids=[f[1] for f in FAULTY_OPS])
def test_injected_fault_on_non_current_device(aclnn, op, call, phase):
    x = torch.arange(64, dtype=torch.float32).to(f"flagos:{DEVICE}")
    y = torch.ones(64).to(f"flagos:{DEVICE}")
    x_before = x.cpu()
    torch.flagos.set_device(CURRENT)
    torch.flagos.synchronize(DEVICE)
    before = allocated()
    torch_fl.sim.reset_stats()

    torch_fl.sim.inject_fault(aclnn, phase)
    with pytest.raises(RuntimeError, match=aclnn):
        call(x, y)

    assert torch.flagos.current_device() == CURRENT
    torch.flagos.synchronize(DEVICE)
    assert allocated() == before, f"{op}: allocations left behind by the failed launch"
    stats = torch_fl.sim.stats()
    assert stats["rejected_launches"] == 0
    assert stats["launches"].get(CURRENT, 0) == 0
    assert torch.equal(x.cpu(), x_before)  # a failed in-place launch wrote nothing

    # The fault was used up: the same call now succeeds, on DEVICE.
    result = call(x, y)
    assert result.device == torch.device("flagos", DEVICE)
    assert torch.equal(result.cpu(), torch.add(x_before, 1) if aclnn != "aclnnMul" else x_before)
    assert torch.flagos.current_device() == CURRENT


@pytest.mark.parametrize("phase", [1, 2])
def test_fault_count_and_clear(phase):
    x = torch.ones(8, device=f"flagos:{DEVICE}")
    torch_fl.sim.inject_fault("aclnnAdd", phase, count=2)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="aclnnAdd"):
            x + x
        assert torch.flagos.current_device() == CURRENT
    assert torch.equal((x + x).cpu(), torch.full((8,), 2.0))
    torch_fl.sim.inject_fault("aclnnAdd", phase, count=5)
    torch_fl.sim.clear_faults()
    assert torch.equal((x + x).cpu(), torch.full((8,), 2.0))


def test_fault_in_handwritten_kernel_restores_device():
    """A handwritten kernel (fill_) fails the same way."""
    x = torch.zeros(16, device=f"flagos:{DEVICE}")
    before = allocated()
    torch_fl.sim.inject_fault("aclnnInplaceFillScalar", 2)
    with pytest.raises(RuntimeError, match="aclnnInplaceFillScalar"):
        x.fill_(3.0)
    assert torch.flagos.current_device() == CURRENT
    assert allocated() == before
    assert torch.equal(x.cpu(), torch.zeros(16))
