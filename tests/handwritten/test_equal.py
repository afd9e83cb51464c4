"""torch.equal (csrc/handwritten/equal.cc) on flagos:2 while flagos:0 is
current, against the CPU: equal and unequal values, other shapes, dtypes
compared after promotion, NaN, empty tensors, views; and the device rule."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, needs_devices, on_device, rejected

pytestmark = needs_devices

X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

CASES = {
    "equal": (X, X.clone()),
    "one element differs": (X, X.clone().index_fill_(1, torch.tensor([2]), 7.0)),
    "other shape": (X, X.reshape(3, 2)),
    "broadcastable is not equal": (X[:1], X[:1].expand(2, 3)),
    "int and float": (X.long(), X),
    "bool": (X > 2, X > 2),
    "nan": (torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0])),
    "empty": (torch.empty(0, 3), torch.empty(0, 3)),
    "empty, other shapes": (torch.empty(0, 3), torch.empty(3, 0)),
    "0-dim": (torch.tensor(2.5), torch.tensor(2.5)),
    "non-contiguous": (X.t(), X.t().contiguous()),
    "bfloat16": (X.bfloat16(), X.bfloat16()),
}


@pytest.mark.parametrize("name", CASES)
def test_equal_as_on_the_cpu(name):
    a, b = CASES[name]
    da, db = on_device(a, b)
    assert torch.equal(da, db) is torch.equal(a, b)
    assert_clean(ops=["aclnnEqual"])


def test_same_tensor_with_nan_is_not_equal():
    x = on_device(torch.tensor([float("nan")]))
    assert torch.equal(x, x) is False  # as on the CPU: NaN != NaN


def test_devices_must_match():
    a = torch.ones(3, device=DEVICE)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.equal(a, torch.ones(3, device="flagos:1"))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.equal(a, torch.ones(3))
    assert torch.equal(torch.tensor(2.0, device=DEVICE), torch.tensor(2.0))  # a CPU 0-dim operand is a number


def test_negative_control_equal(unguarded):
    a, b = on_device(X, X)
    with rejected():
        torch.ops.aten.equal(a, b)
