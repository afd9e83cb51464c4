"""sort and topk (csrc/handwritten/sort.cc) with their tensors on flagos:2
while flagos:0 is current."""

import pytest
import torch
from hw_util import DEVICE, assert_clean, assert_equal, on_device, rejected

# Ties, so that stability shows.
DATA = torch.tensor([[3, 1, 2, 1, 3, 0], [5, 5, 4, 4, 6, 6]])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_stable(dtype, descending, dim):
    x = DATA.to(dtype)
    dx = on_device(x)
    values, indices = torch.sort(dx, dim=dim, descending=descending, stable=True)
    expected_values, expected_indices = torch.sort(x, dim=dim, descending=descending, stable=True)
    assert_clean(values, indices, ops=["aclnnSort"])
    assert_equal(values, expected_values)
    assert_equal(indices, expected_indices)


def test_sort_unstable_sorts():
    x = torch.randn(4, 7)
    dx = on_device(x)
    values, indices = torch.sort(dx, descending=True)
    assert_clean(values, indices, ops=["aclnnSort"])
    assert_equal(values, torch.sort(x, descending=True).values)
    assert_equal(x.gather(1, indices.cpu()), values.cpu())


def test_sort_values_out_forms():
    x = DATA.float()
    dx = on_device(x)
    values, indices = torch.empty(0, device=DEVICE), torch.empty(0, dtype=torch.long, device=DEVICE)
    torch.sort(dx, 1, True, out=(values, indices))
    stable_values, stable_indices = torch.empty_like(dx), torch.empty(dx.shape, dtype=torch.long, device=DEVICE)
    torch.sort(dx, stable=True, dim=1, out=(stable_values, stable_indices))
    assert_clean(values, indices, stable_values, stable_indices, ops=["aclnnSort"])
    assert_equal(values, torch.sort(x, 1, True).values)
    assert_equal(stable_indices, torch.sort(x, stable=True, dim=1).indices)


def test_sort_0_dim():
    dx = on_device(torch.tensor(2.5))
    values, indices = torch.sort(dx)
    assert_clean(values, indices)
    assert values.shape == () and values.item() == 2.5 and indices.item() == 0


def test_sort_out_wrong_dtype():
    dx = on_device(DATA.float())
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got int instead"):
        torch.sort(dx, out=(torch.empty(0, device=DEVICE), torch.empty(0, dtype=torch.int32, device=DEVICE)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    x = torch.randperm(40).reshape(5, 8).to(dtype)
    dx = on_device(x)
    values, indices = torch.topk(dx, 3, dim=1, largest=largest)
    expected = torch.topk(x, 3, dim=1, largest=largest)
    assert_clean(values, indices, ops=["aclnnTopk"])
    assert_equal(values, expected.values)
    assert_equal(indices, expected.indices)


def test_topk_values_out_and_dim0():
    x = torch.randperm(40).reshape(5, 8).float()
    dx = on_device(x)
    values, indices = torch.empty(0, device=DEVICE), torch.empty(0, dtype=torch.long, device=DEVICE)
    torch.topk(dx, 2, dim=0, out=(values, indices))
    assert_clean(values, indices, ops=["aclnnTopk"])
    assert_equal(values, torch.topk(x, 2, dim=0).values)
    assert_equal(indices, torch.topk(x, 2, dim=0).indices)


def test_topk_k_out_of_range():
    dx = on_device(torch.randn(5))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(dx, 6)


def test_negative_control_sort(unguarded):
    dx = on_device(torch.randn(3, 4))
    with rejected():
        torch.sort(dx)


def test_negative_control_topk(unguarded):
    dx = on_device(torch.randn(3, 4))
    with rejected():
        torch.topk(dx, 2)
