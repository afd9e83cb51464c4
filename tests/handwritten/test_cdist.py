"""_cdist_forward (csrc/handwritten/cdist.cc), which torch.cdist reaches, on
flagos:2 while flagos:0 is current, against the CPU: p values, batches that
broadcast, compute modes, empty inputs, and ATen's checks at the call."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected

pytestmark = needs_devices

cdist_forward = torch.ops.aten._cdist_forward


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_forward(p):
    x1, x2 = torch.randn(2, 4, 3), torch.randn(1, 5, 3)  # batch dims broadcast
    d1, d2 = on_device(x1, x2)
    out = cdist_forward(d1, d2, p, None)
    assert_clean(out, ops=["aclnnCdist"])
    assert out.shape == (2, 4, 5)
    torch.testing.assert_close(out.cpu(), cdist_forward(x1, x2, p, None), rtol=1e-4, atol=1e-4)


def test_torch_cdist_and_dtypes():
    for dtype in (torch.float32, torch.float64):
        x1, x2 = torch.randn(4, 3, dtype=dtype), torch.randn(6, 3, dtype=dtype)
        d1, d2 = on_device(x1, x2)
        out = torch.cdist(d1, d2, p=1.0)
        assert_clean(out, ops=["aclnnCdist"])
        assert_equal(out, torch.cdist(x1, x2, p=1.0))


def test_empty_inputs():
    for x1, x2 in ((torch.randn(0, 3), torch.randn(4, 3)), (torch.randn(2, 0), torch.randn(4, 0))):
        d1, d2 = on_device(x1, x2)
        out = cdist_forward(d1, d2, 2.0, None)
        assert_clean(out)
        assert_equal(out, cdist_forward(x1, x2, 2.0, None))


@pytest.mark.parametrize("args,message", [
    ((torch.randn(3), torch.randn(2, 3), 2.0, None), "cdist only supports at least 2D tensors, X1 got: 1D"),
    ((torch.randn(2, 3), torch.randn(2, 4), 2.0, None), "X1 and X2 must have the same number of columns"),
    ((torch.randn(2, 3), torch.randn(2, 3), -1.0, None), "cdist only supports non-negative p values"),
    ((torch.ones(2, 3, dtype=torch.int32), torch.ones(2, 3, dtype=torch.int32), 2.0, None),
     "cdist only supports floating-point dtypes, X1 got: Int"),
    ((torch.randn(2, 3), torch.randn(2, 3), 2.0, 5), "possible modes: 0, 1, 2, but was: 5"),
])
def test_checks_at_the_call(args, message):
    with pytest.raises(RuntimeError, match=message):
        cdist_forward(*args)
    x1, x2 = on_device(args[0], args[1])
    with pytest.raises(RuntimeError, match=message):
        cdist_forward(x1, x2, *args[2:])
    assert "aclnnCdist" not in torch_fl.sim.stats()["op_launches"]


def test_negative_control_cdist(unguarded):
    d1, d2 = on_device(torch.randn(2, 3), torch.randn(4, 3))
    with rejected():
        cdist_forward(d1, d2, 2.0, None)
