"""masked_select (csrc/handwritten/masked_select.cc) with its tensors on
flagos:2 while flagos:0 is current. The output size depends on the mask."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, on_device, rejected


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_masked_select(dtype):
    x = torch.arange(12).reshape(3, 4).to(dtype)
    mask = (x % 3 == 0)
    dx, dmask = on_device(x, mask)
    out = torch.masked_select(dx, dmask)
    assert_clean(out, ops=["aclnnMaskedSelect", "aclnnReduceSum"])
    assert out.shape == (4,)
    assert_equal(out, torch.masked_select(x, mask))


def test_masked_select_broadcasts():
    x, mask = torch.randn(3, 4), torch.tensor([True, False, True, True])
    dx, dmask = on_device(x, mask)
    out = torch.masked_select(dx, dmask)
    assert_clean(out, ops=["aclnnMaskedSelect"])
    assert out.shape == (9,)
    assert_equal(out, torch.masked_select(x, mask))


def test_masked_select_nothing_selected():
    dx, dmask = on_device(torch.randn(3, 4), torch.zeros(3, 4, dtype=torch.bool))
    out = torch.masked_select(dx, dmask)
    assert_clean(out)
    assert out.shape == (0,)
    assert "aclnnMaskedSelect" not in torch_fl.sim.stats()["op_launches"]


def test_masked_select_out():
    x = torch.randn(5, 2)
    mask = x > 0
    dx, dmask = on_device(x, mask)
    out = torch.empty(0, device=DEVICE)
    assert torch.masked_select(dx, dmask, out=out) is out
    assert_clean(out, ops=["aclnnMaskedSelect"])
    assert_equal(out, torch.masked_select(x, mask))


def test_masked_select_errors():
    dx, dmask = on_device(torch.randn(3), torch.ones(3, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        torch.masked_select(dx, dmask)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.masked_select(dx, torch.ones(3, dtype=torch.bool, device="flagos:1"))


def test_negative_control_masked_select(unguarded):
    dx, dmask = on_device(torch.randn(3, 4), torch.ones(3, 4, dtype=torch.bool))
    with rejected():
        torch.masked_select(dx, dmask)
