"""Division with a rounding mode (csrc/handwritten/div_mode.cc: aclnnDivMod,
aclnnDivMods and their in-place forms) and the generated div.out / div_
forms, on flagos:2 while flagos:0 is current, against the CPU."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected

pytestmark = needs_devices

A = torch.tensor([[7.5, -7.5, 3.0], [-2.25, 9.0, -0.5]])
B = torch.tensor([2.0, -2.0, 4.0])
IA = torch.tensor([[7, -7, 3], [-9, 9, 0]])
IB = torch.tensor([2, -2, 4])


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("a,b", [(A, B), (IA, IB), (IA, B), (A.half(), B.half())], ids=["float", "int", "mixed", "half"])
def test_div_tensor_mode(mode, a, b):
    da, db = on_device(a, b)
    out = torch.div(da, db, rounding_mode=mode)
    assert_clean(out, ops=["aclnnDivMod"])
    assert_equal(out, torch.div(a, b, rounding_mode=mode))


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_scalar_mode(mode):
    for a, other in [(A, 2.0), (IA, 2), (IA, -2.5), (A, -3)]:
        da = on_device(a)
        out = torch.div(da, other, rounding_mode=mode)
        assert_clean(out, ops=["aclnnDivMods"])
        assert_equal(out, torch.div(a, other, rounding_mode=mode))
        assert torch_fl.sim.stats()["op_launches"] == {"aclnnDivMods": 1}  # a Python number: its value


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_mode_in_place_and_out(mode):
    da, db = on_device(A, B)
    assert da.div_(db, rounding_mode=mode) is da
    assert_clean(da, ops=["aclnnInplaceDivMod"])
    assert_equal(da, A.clone().div_(B, rounding_mode=mode))
    da = on_device(A)
    da.div_(3.0, rounding_mode=mode)
    assert_clean(da, ops=["aclnnInplaceDivMods"])
    assert_equal(da, A.clone().div_(3.0, rounding_mode=mode))
    da, db = on_device(IA, IB)
    out = torch.empty(0, dtype=torch.float32 if mode is None else torch.int64, device=DEVICE)
    assert torch.div(da, db, rounding_mode=mode, out=out) is out
    assert_clean(out, ops=["aclnnDivMod"])
    assert_equal(out, torch.div(IA, IB, rounding_mode=mode))


def test_div_mode_cpu_operands():
    da = on_device(A)
    out = torch.div(da, torch.tensor(2.0), rounding_mode="floor")  # a CPU 0-dim divisor
    assert_equal(out, torch.div(A, torch.tensor(2.0), rounding_mode="floor"))
    db = on_device(B)
    out = torch.div(torch.tensor(9.0), db, rounding_mode="trunc")  # a CPU 0-dim dividend
    assert_equal(out, torch.div(torch.tensor(9.0), B, rounding_mode="trunc"))
    assert_clean(out)


def test_div_mode_errors():
    da, db = on_device(A, B)
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        torch.div(da, db, rounding_mode="round")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.div(da, B.to("flagos:1"), rounding_mode="floor")
    di = on_device(IA)
    with pytest.raises(RuntimeError):
        di.div_(db)  # true division cannot write an integer tensor


def test_div_out_and_in_place_true_division():
    da, db = on_device(A, B)
    out = torch.empty(0, device=DEVICE)
    assert torch.div(da, db, out=out) is out
    assert_clean(out, ops=["aclnnDiv"])
    assert_equal(out, A / B)
    da.div_(db)
    da.div_(2.0)
    assert_equal(da, A / B / 2.0)
    assert {"aclnnInplaceDiv", "aclnnInplaceDivs"} <= set(torch_fl.sim.stats()["op_launches"])


def test_negative_control_div_mode(unguarded):
    da, db = on_device(A, B)
    with rejected():
        torch.div(da, db, rounding_mode="floor")
