"""clamp with scalar and tensor bounds (generated from yaml/ops/binary_math.yaml, once handwritten:
aclnnClamp, aclnnClampTensor), functional, in place and out=, on flagos:2
while flagos:0 is current, against the CPU. An absent bound is a nullptr
argument, and the executor cache keeps clamp(x, min) and clamp(x, max=...)
apart."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected

pytestmark = needs_devices

X = torch.tensor([[-3.0, -0.5, 0.0], [0.25, 1.5, 4.0]])
LO = torch.tensor([-1.0, 0.0, 0.5])
HI = torch.tensor([[0.0], [2.0]])


@pytest.mark.parametrize("kwargs", [{"min": -1.0}, {"max": 1.0}, {"min": -1.0, "max": 1.0}, {"min": 2.0, "max": 1.0}],
                         ids=["min", "max", "both", "min above max"])
def test_clamp_scalar(kwargs):
    dx = on_device(X)
    out = torch.clamp(dx, **kwargs)
    assert_clean(out, ops=["aclnnClamp"])
    assert_equal(out, torch.clamp(X, **kwargs))
    dy = on_device(X)
    assert dy.clamp_(**kwargs) is dy
    assert_equal(dy, X.clone().clamp_(**kwargs))
    out = torch.empty(0, device=DEVICE)
    assert torch.clamp(on_device(X), **kwargs, out=out) is out
    assert_equal(out, torch.clamp(X, **kwargs))


def test_clamp_scalar_dtypes():
    ints = torch.tensor([-5, 0, 5])
    for x, kwargs in [(ints, {"min": -2}), (ints, {"min": -2.5}), (ints, {"max": 1.5}), (X.half(), {"max": 0.5}),
                      (torch.tensor(0.75), {"max": 0.5})]:  # 0-dim: clip_grad_norm_'s clip coefficient
        assert_equal(torch.clamp(on_device(x), **kwargs), torch.clamp(x, **kwargs))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        on_device(ints).clamp_(min=0.5)
    with pytest.raises(RuntimeError, match="Found dtype Long but expected Float"):  # as the CPU's clamp.out
        torch.clamp(on_device(ints), min=0.5, out=torch.empty(0, dtype=torch.long, device=DEVICE))


@pytest.mark.parametrize("bounds", [(LO, HI), (LO, None), (None, HI)], ids=["both", "min", "max"])
def test_clamp_tensor(bounds):
    lo, hi = bounds
    args = [b.to(DEVICE) if b is not None else None for b in bounds]
    dx = on_device(X)
    out = torch.clamp(dx, *args)
    assert_clean(out, ops=["aclnnClampTensor"])
    assert_equal(out, torch.clamp(X, lo, hi))
    dy = X.to(DEVICE)
    assert dy.clamp_(*args) is dy
    assert_equal(dy, X.clone().clamp_(lo, hi))
    out = torch.empty(0, device=DEVICE)
    assert torch.clamp(X.to(DEVICE), *args, out=out) is out
    assert_equal(out, torch.clamp(X, lo, hi))


def test_clamp_tensor_min_and_max_forms_do_not_share_an_executor():
    """clamp_(x, lo, None) and clamp_(x, None, hi) launch aclnnClampTensor with
    the same tensor signatures but a different absent bound."""
    bound = torch.tensor([0.5, 0.5, 0.5])
    a, b = X.to(DEVICE), X.to(DEVICE)
    db = bound.to(DEVICE)
    a.clamp_(db, None)
    b.clamp_(None, db)
    assert_equal(a, X.clone().clamp_(bound, None))
    assert_equal(b, X.clone().clamp_(None, bound))


def test_clamp_tensor_promotes_and_broadcasts():
    ints = torch.tensor([[-5, 0, 5]])
    lo = torch.tensor([[-1.5], [0.5]])
    di, dl = on_device(ints, lo)
    out = torch.clamp(di, dl)
    assert out.shape == (2, 3)
    assert_equal(out, torch.clamp(ints, lo))
    dx = on_device(X)
    # A CPU 0-dim bound: ATen's meta function (a TensorIterator taking no CPU scalar) rejects it, as on CUDA.
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.clamp(dx, min=torch.tensor(0.5))
    assert_equal(torch.clamp_min(dx, on_device(LO)), torch.clamp_min(X, LO))
    assert_equal(torch.clamp_max(dx, on_device(HI)), torch.clamp_max(X, HI))


def test_clamp_errors():
    dx = on_device(X)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(dx)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.ops.aten.clamp.Tensor(dx, None, None)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.clamp(dx, LO.to("flagos:1"))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        on_device(LO).clamp_(HI.to(DEVICE))


def test_negative_control_clamp(unguarded):
    dx, dl = on_device(X, LO)
    with rejected():
        torch.clamp(dx, min=0.0)
    with rejected():
        torch.clamp(dx, dl)
