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
