"""Casts, copies of strided views and factories with a `device`, on a flagos
device that is not the current one. `.to(dtype)`, `clone()` and
`contiguous()` reach the handwritten _copy_from (csrc/handwritten/copy.cc)
through empty_like + copy_: they must launch on the tensor's device, through
no CPU fallback; a copy to another device with a dtype converts there."""

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 3, reason="needs three flagos devices")
DEVICE = "flagos:2"


def run_on_device(fn, *args):
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    result = fn(*args)
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == 0
    assert stats["fallback_ops"] == {}, stats["fallback_ops"]
    assert stats["rejected_launches"] == 0
    return result, stats


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.bool])
def test_cast_runs_on_the_tensors_device(dtype):
    x = torch.randn(3, 4)
    dx = x.to(DEVICE)
    result, stats = run_on_device(lambda: dx.t().to(dtype))
    assert result.device == torch.device(DEVICE) and result.dtype == dtype
    assert stats["launches"][0] == 0 and stats["launches"][2] >= 1, stats["launches"]
    assert torch.equal(result.cpu(), x.t().to(dtype))


@pytest.mark.parametrize("method", ["clone", "contiguous"])
def test_copies_of_strided_views_run_on_device(method):
    x = torch.randn(4, 6)
    dx = x.to(DEVICE)
    view = dx.t()[1:, ::2]
    result, stats = run_on_device(getattr(view, method))
    assert result.device == torch.device(DEVICE)
    assert result.is_contiguous() or method == "clone"  # clone keeps a permutation of the strides
    assert stats["op_launches"].get("aclnnInplaceCopy", 0) >= 1
    assert stats["launches"][0] == 0, stats["launches"]
    assert torch.equal(result.cpu(), x.t()[1:, ::2])


def test_copy_to_another_device_with_a_dtype_converts_on_the_destination():
    x = torch.randn(3, 4)
    dx = x.to("flagos:1")
    result, stats = run_on_device(lambda: dx.to(DEVICE, torch.float64))
    assert result.device == torch.device(DEVICE) and result.dtype == torch.float64
    assert stats["launches"][0] == 0 and stats["launches"][1] == 0, stats["launches"]
    assert torch.equal(result.cpu(), x.double())


@pytest.mark.parametrize("factory,expected", [
    (lambda d: torch.zeros(2, 3, device=d), torch.zeros(2, 3)),
    (lambda d: torch.ones(2, 3, dtype=torch.int64, device=d), torch.ones(2, 3, dtype=torch.int64)),
    (lambda d: torch.full((2,), 1.5, device=d), torch.full((2,), 1.5)),
    (lambda d: torch.arange(1, 7, 2, device=d), torch.arange(1, 7, 2)),
    (lambda d: torch.eye(3, 2, device=d), torch.eye(3, 2)),
    (lambda d: torch.linspace(0, 1, 5, device=d), torch.linspace(0, 1, 5)),
    (lambda d: torch.zeros_like(torch.empty(2, 2, device=d)), torch.zeros(2, 2)),
    (lambda d: torch.full_like(torch.empty(2, device=d), 3.0), torch.full((2,), 3.0)),
])
def test_factories_fill_on_their_device(factory, expected):
    result, stats = run_on_device(factory, DEVICE)
    assert result.device == torch.device(DEVICE)
    assert stats["launches"][0] == 0 and stats["launches"][2] >= 1, stats["launches"]
    assert torch.equal(result.cpu(), expected)


def test_negative_control_cast_without_guards_is_rejected():
    dx = torch.randn(3, 4).to(DEVICE)
    torch_fl._C._set_guards_enabled(False)
    torch_fl._C._set_device_check(False)
    try:
        with pytest.raises(RuntimeError, match="lives on device 2 but the launch runs on device 0"):
            dx.t().to(torch.float64)
    finally:
        torch_fl._C._set_device_check(True)
        torch_fl._C._set_guards_enabled(True)
