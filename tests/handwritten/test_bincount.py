"""bincount (csrc/handwritten/bincount.cc) on flagos:2 while flagos:0 is
current, against the CPU: counts and weights of several dtypes, minlength,
empty inputs, ATen's checks at the call, and the guards-off negative
control. The result's length depends on the data."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, needs_devices, on_device, rejected

pytestmark = needs_devices


def assert_same(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.int8])
@pytest.mark.parametrize("minlength", [0, 3, 12])
def test_counts(dtype, minlength):
    x = torch.tensor([1, 4, 4, 0, 7, 1, 4]).to(dtype)
    d = on_device(x)
    out = torch.bincount(d, minlength=minlength)
    assert_clean(out, ops=["aclnnBincount"])
    assert_same(out, torch.bincount(x, minlength=minlength))


@pytest.mark.parametrize("wdtype", [torch.float32, torch.float64, torch.float16, torch.int32])
def test_weights(wdtype):
    x = torch.tensor([2, 0, 2, 5, 1])
    w = torch.tensor([0.5, 1.25, -2.0, 3.0, 4.5]).to(wdtype)
    dx, dw = on_device(x, w)
    out = torch.bincount(dx, dw, minlength=2)
    assert_clean(out, ops=["aclnnBincount"])
    assert_same(out, torch.bincount(x, w, minlength=2))


def test_empty_inputs():
    for minlength in (0, 4):
        d = on_device(torch.empty(0, dtype=torch.int64))
        out = torch.bincount(d, minlength=minlength)
        assert_clean(out)
        assert_same(out, torch.bincount(torch.empty(0, dtype=torch.int64), minlength=minlength))
    dx, dw = on_device(torch.empty(0, dtype=torch.int64), torch.empty(0))
    assert_same(torch.bincount(dx, dw), torch.bincount(torch.empty(0, dtype=torch.int64), torch.empty(0)))


@pytest.mark.parametrize("args,message", [
    ((torch.tensor([1, -1, 2]),), "bincount only supports 1-d non-negative integral inputs"),
    ((torch.tensor([[1, 2]]),), "bincount only supports 1-d non-negative integral inputs"),
    ((torch.tensor([1.0, 2.0]),), "not implemented for 'Float'"),
    ((torch.tensor([1, 2]), torch.tensor([1.0])), "weights should be 1-d and have the same length as input"),
])
def test_checks_at_the_call(args, message):
    with pytest.raises(RuntimeError, match=message):
        torch.bincount(*args)
    moved = on_device(*args)
    moved = moved if isinstance(moved, tuple) else (moved,)
    with pytest.raises(RuntimeError, match=message):
        torch.bincount(*moved)
    assert "aclnnBincount" not in torch_fl.sim.stats()["op_launches"]
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        torch.bincount(torch.tensor([1], device=DEVICE), minlength=-1)


def test_negative_control_bincount(unguarded):
    d = on_device(torch.tensor([1, 2, 2]))
    with rejected():
        torch.ops.aten.bincount(d)
