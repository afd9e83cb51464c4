"""index.Tensor and index_put_ (csrc/handwritten/index.cc) with self on
flagos:2 while flagos:0 is current, and index tensors on the CPU or on
self's device.

Python's `x[idx]` and `x[idx] = v` make self's device current themselves
(a device guard in torch's indexing code), which would hide a kernel that
does not guard its launch; so most tests call the ATen ops directly."""

import pytest
import torch
from hw_util import DEVICE, assert_clean, assert_equal, on_device, rejected

WHERE = ["cpu", DEVICE]  # where the index tensors live
index = torch.ops.aten.index.Tensor


def place(index, where):
    return index if where == "cpu" else index.to(where)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_index_with_long_indices(where, dtype):
    x = torch.arange(24).reshape(4, 6).to(dtype)
    rows, cols = torch.tensor([3, 0, 3]), torch.tensor([[1], [5]])
    dx = on_device(x)
    i, j = place(rows, where), place(cols, where)
    first, both, second = index(dx, [i]), index(dx, [i, j]), index(dx, [None, j])
    assert_clean(first, both, second, ops=["aclnnIndex"])
    assert_equal(first, x[rows])
    assert_equal(both, x[rows, cols])
    assert_equal(second, x[:, cols])


@pytest.mark.parametrize("where", WHERE)
def test_index_with_int32_indices_and_gap(where):
    x = torch.randn(3, 4, 5)
    rows, last = torch.tensor([2, 0], dtype=torch.int32), torch.tensor([4, 1], dtype=torch.int32)
    dx = on_device(x)
    out = index(dx, [place(rows, where), None, place(last, where)])
    assert_clean(out, ops=["aclnnIndex"])
    assert_equal(out, x[rows, :, last])


@pytest.mark.parametrize("where", WHERE)
def test_index_with_bool_mask(where):
    x = torch.randn(4, 5)
    mask = x > 0
    row_mask = torch.tensor([True, False, True, True])
    dx = on_device(x)
    whole, rows = index(dx, [place(mask, where)]), index(dx, [place(row_mask, where)])
    # ATen's meta function sizes the result with nonzero, where the mask lives
    assert_clean(whole, rows, ops=["aclnnIndex"] + (["aclnnNonzero"] if where == DEVICE else []))
    assert_equal(whole, x[mask])
    assert_equal(rows, x[row_mask])


@pytest.mark.parametrize("where", WHERE)
def test_python_indexing_syntax(where):
    x = torch.randn(4, 5)
    rows = torch.tensor([3, 1])
    dx = on_device(x)
    out = dx[place(rows, where), 1:]
    assert_clean(out, ops=["aclnnIndex"])
    assert_equal(out, x[rows, 1:])


def test_index_errors():
    dx = on_device(torch.randn(4, 5))
    # ATen's meta function raises this one as a RuntimeError (on CUDA too)
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        dx[torch.tensor([0], device="flagos:1")]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        dx[torch.tensor([0.0])]
    with pytest.raises(IndexError, match="shape of the mask"):
        dx[torch.ones(3, dtype=torch.bool)]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_index_put(where, accumulate, dtype):
    x = torch.arange(20).reshape(4, 5).to(dtype)
    rows = torch.tensor([1, 3, 1]) if accumulate else torch.tensor([1, 3])
    values = (torch.arange(5) * 100).to(dtype)
    dx, dvalues = on_device(x, values)
    result = dx.index_put_((place(rows, where),), dvalues, accumulate=accumulate)
    assert result is dx
    assert_clean(dx, ops=["aclnnIndexPutImpl"])
    assert_equal(dx, x.clone().index_put_((rows,), values, accumulate=accumulate))


@pytest.mark.parametrize("where", WHERE)
def test_setitem_with_mask_and_number(where):
    x = torch.randn(4, 5)
    mask = x < 0
    dx = on_device(x)
    dx[place(mask, where)] = 0.5
    expected = x.clone()
    expected[mask] = 0.5
    assert_clean(dx, ops=["aclnnIndexPutImpl"])
    assert_equal(dx, expected)


def test_index_put_errors():
    dx = on_device(torch.randn(4, 5))
    rows = torch.tensor([0, 1])
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        dx.index_put_((rows,), torch.ones(5, dtype=torch.float64, device=DEVICE))
    with pytest.raises(RuntimeError, match="shape mismatch"):
        dx.index_put_((rows,), torch.ones(3, device=DEVICE))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        dx.index_put_((rows,), torch.ones(5, device="flagos:1"))


@pytest.mark.parametrize("where", WHERE)
def test_negative_control_index(unguarded, where):
    dx = on_device(torch.randn(4, 5))
    with rejected():
        index(dx, [place(torch.tensor([1, 2]), where)])


@pytest.mark.parametrize("where", WHERE)
def test_negative_control_index_put(unguarded, where):
    dx, dvalues = on_device(torch.randn(4, 5), torch.ones(5))
    with rejected():
        dx.index_put_((place(torch.tensor([1, 2]), where),), dvalues, accumulate=True)
