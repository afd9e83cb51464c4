"""cat and stack (csrc/handwritten/cat.cc) with their tensors on flagos:2
while flagos:0 is current."""

import pytest
import torch
from hw_util import DEVICE, assert_clean, assert_equal, on_device, rejected


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dtype, dim):
    parts = [torch.arange(12).reshape(3, 4).to(dtype), torch.arange(12, 24).reshape(3, 4).to(dtype)]
    moved = on_device(*parts)
    out = torch.cat(moved, dim)
    assert_clean(out, ops=["aclnnCat"])
    assert_equal(out, torch.cat(parts, dim))


def test_cat_promotes_and_skips_legacy_empty_tensors():
    parts = [torch.ones(2, 3, dtype=torch.int32), torch.empty(0), torch.randn(1, 3)]
    moved = on_device(*parts)
    out = torch.cat(moved)
    assert_clean(out, ops=["aclnnCat"])
    assert_equal(out, torch.cat(parts))


def test_cat_out():
    parts = [torch.randn(2, 3), torch.randn(4, 3)]
    moved = on_device(*parts)
    out = torch.empty(0, device=DEVICE)
    assert torch.cat(moved, out=out) is out
    assert_clean(out, ops=["aclnnCat"])
    assert_equal(out, torch.cat(parts))


def test_cat_errors():
    a, b = on_device(torch.randn(2, 3), torch.randn(2, 4))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        torch.cat([a, b])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.cat([a, torch.randn(2, 3, device="flagos:1")])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
@pytest.mark.parametrize("dim", [0, 2, -1])
def test_stack(dtype, dim):
    parts = [torch.arange(6).reshape(2, 3).to(dtype) + 10 * i for i in range(3)]
    moved = on_device(*parts)
    out = torch.stack(moved, dim)
    assert_clean(out, ops=["aclnnStack"])
    assert_equal(out, torch.stack(parts, dim))


def test_stack_out():
    parts = [torch.randn(2, 3), torch.randn(2, 3)]
    moved = on_device(*parts)
    out = torch.empty(0, device=DEVICE)
    torch.stack(moved, 1, out=out)
    assert_clean(out, ops=["aclnnStack"])
    assert_equal(out, torch.stack(parts, 1))


def test_stack_errors():
    a, b = on_device(torch.randn(2, 3), torch.randn(3, 2))
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([a, b])


def test_negative_control_cat(unguarded):
    moved = on_device(torch.randn(2, 3), torch.randn(2, 3))
    with rejected():
        torch.cat(moved)


def test_negative_control_stack(unguarded):
    moved = on_device(torch.randn(2, 3), torch.randn(2, 3))
    with rejected():
        torch.stack(moved)
