"""_unique2 (csrc/handwritten/unique.cc), which torch.unique reaches without
a dim, on flagos:2 while flagos:0 is current, against the CPU: dtypes, the
inverse and the counts, 0-dim and empty inputs, and the guards-off negative
control. The outputs' sizes depend on the data."""

import pytest
import torch
import torch_fl
from hw_util import assert_clean, needs_devices, on_device, rejected

pytestmark = needs_devices

unique2 = torch.ops.aten._unique2


def assert_same(actual, expected):
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32, torch.uint8, torch.bool])
@pytest.mark.parametrize("return_inverse,return_counts", [(False, False), (True, False), (False, True), (True, True)])
def test_unique2(dtype, return_inverse, return_counts):
    x = torch.randint(0, 5, (3, 7)).to(dtype)
    d = on_device(x)
    out = unique2(d, True, return_inverse, return_counts)
    assert_clean(*out, ops=["aclnnUnique2"])
    assert_same(out, unique2(x, True, return_inverse, return_counts))


def test_torch_unique_and_unsorted():
    x = torch.tensor([[3.0, 1.0, 3.0], [2.0, -1.0, 1.0]])
    d = on_device(x)
    values, inverse, counts = torch.unique(d, return_inverse=True, return_counts=True)
    assert_clean(values, inverse, counts, ops=["aclnnUnique2"])
    assert_same((values, inverse, counts), torch.unique(x, return_inverse=True, return_counts=True))
    values, inverse = torch.unique(d, sorted=False, return_inverse=True)
    assert_clean(values, inverse)
    assert sorted(values.cpu().tolist()) == [-1.0, 1.0, 2.0, 3.0]
    torch.testing.assert_close(values.cpu()[inverse.cpu()], x)  # the inverse rebuilds the input


def test_zero_dim_and_empty_inputs():
    for x in (torch.tensor(4.0), torch.empty(0), torch.empty(2, 0, dtype=torch.int64)):
        d = on_device(x)
        out = unique2(d, True, True, True)
        assert_clean(*out)
        assert_same(out, unique2(x, True, True, True))


def test_negative_control_unique2(unguarded):
    d = on_device(torch.tensor([1, 2, 2]))
    with rejected():
        unique2(d, True, False, False)


# ---- unique_consecutive, unique_dim, unique_dim_consecutive ----------------

RUNS = torch.tensor([[1, 1, 2], [1, 1, 2], [3, 3, 3], [1, 1, 2], [1, 1, 2]])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8, torch.bool])
@pytest.mark.parametrize("return_inverse,return_counts", [(False, False), (True, False), (False, True), (True, True)])
def test_unique_consecutive_flat(dtype, return_inverse, return_counts):
    x = torch.tensor([[0, 0, 1, 1], [1, 3, 3, 0], [2, 2, 2, 4]]).to(dtype)
    d = on_device(x)
    out = torch.ops.aten.unique_consecutive(d, return_inverse, return_counts, None)
    assert_clean(*out, ops=["aclnnUniqueConsecutive"])
    assert_same(out, torch.ops.aten.unique_consecutive(x, return_inverse, return_counts, None))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_consecutive_dim(dim):
    for dtype in (torch.float32, torch.int32):
        x = RUNS.to(dtype)
        d = on_device(x)
        out = torch.unique_consecutive(d, return_inverse=True, return_counts=True, dim=dim)
        assert_clean(*out, ops=["aclnnUniqueConsecutive"])
        assert_same(out, torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim))
        d = on_device(x)
        out = torch.ops.aten.unique_dim_consecutive(d, dim, False, False)
        assert_clean(*out, ops=["aclnnUniqueConsecutive"])
        assert_same(out, torch.ops.aten.unique_dim_consecutive(x, dim, False, False))


@pytest.mark.parametrize("dim", [0, 1, -2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_unique_dim(dim, dtype):
    x = torch.cat([RUNS, RUNS.flip(0)], 1).to(dtype)
    d = on_device(x)
    out = torch.unique(d, dim=dim, return_inverse=True, return_counts=True)
    assert_clean(*out, ops=["aclnnUniqueDim"])
    assert_same(out, torch.unique(x, dim=dim, return_inverse=True, return_counts=True))
    # ATen's kernel returns the inverse and the counts even when not asked for.
    d = on_device(x)
    out = torch.ops.aten.unique_dim(d, dim, True, False, False)
    assert_clean(*out, ops=["aclnnUniqueDim"])
    assert_same(out, torch.ops.aten.unique_dim(x, dim, True, False, False))


def test_unique_by_dim_of_a_3d_input():
    x = torch.randint(0, 2, (3, 4, 2)).float()
    for dim in range(3):
        d = on_device(x)
        out = torch.unique(d, dim=dim, return_inverse=True, return_counts=True)
        assert_clean(*out)
        assert out[0].is_contiguous()
        assert_same(out, torch.unique(x, dim=dim, return_inverse=True, return_counts=True))


def test_unique_consecutive_and_dim_of_0_dim_and_empty_inputs():
    for x in (torch.tensor(4.0), torch.empty(0), torch.empty(2, 0, dtype=torch.int64)):
        d = on_device(x)
        out = torch.ops.aten.unique_consecutive(d, True, True, None)
        assert_clean(*out)
        assert_same(out, torch.ops.aten.unique_consecutive(x, True, True, None))
    for x, dim in ((torch.empty(0), 0), (torch.empty(0, 3), 0), (torch.empty(2, 0), 1)):
        for op in (lambda t: torch.ops.aten.unique_dim(t, dim, True, True, True),
                   lambda t: torch.ops.aten.unique_consecutive(t, True, True, dim)):
            d = on_device(x)
            out = op(d)
            assert_clean(*out)
            assert_same(out, op(x))


def test_unique_dim_errors_name_the_problem():
    d = on_device(torch.empty(2, 0))
    with pytest.raises(RuntimeError, match="aren't selected, so unique cannot be applied"):
        torch.unique(d, dim=0)
    d = on_device(torch.empty(0, 0))
    with pytest.raises(RuntimeError, match="Number of zero sized dimensions is more than one"):
        torch.unique_consecutive(d, dim=1)
    d = on_device(RUNS)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.unique(d, dim=2)
    d = on_device(torch.tensor(3))
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        torch.unique_consecutive(d, dim=0)
    assert torch.flagos.current_device() == 0


def test_negative_control_unique_consecutive_and_dim(unguarded):
    d = on_device(RUNS)
    with rejected():
        torch.unique_consecutive(d)
    with rejected():
        torch.unique_consecutive(d, dim=0)
    with rejected():
        torch.unique(d, dim=1)
