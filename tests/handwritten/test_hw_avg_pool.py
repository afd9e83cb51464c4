"""2-d average pooling (csrc/handwritten/pooling.cc, aclnnAvgPool2d and
aclnnAvgPool2dBackward) through F.avg_pool2d and nn.AvgPool2d, forward and
backward, against the CPU, with the tensors on flagos:2 while flagos:0 is
current."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean

OPS = ["aclnnAvgPool2d", "aclnnAvgPool2dBackward"]

# (label, input shape, kwargs of F.avg_pool2d)
GEOMETRIES = [
    ("downsample", (2, 3, 8, 8), dict(kernel_size=2, stride=2)),
    ("padded, count pad", (2, 2, 7, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("padded, exclude pad", (1, 3, 7, 9), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("rectangular", (2, 2, 7, 10), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
    ("ceil mode", (1, 3, 7, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("divisor override", (2, 1, 6, 6), dict(kernel_size=3, stride=1, divisor_override=4)),
    ("unbatched", (3, 8, 5), dict(kernel_size=3, stride=1, padding=1)),
]


@pytest.mark.parametrize("shape,kwargs", [g[1:] for g in GEOMETRIES], ids=[g[0] for g in GEOMETRIES])
def test_forward_and_backward(shape, kwargs):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected = F.avg_pool2d(xc, **kwargs)
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
    expected.backward(grad)
    torch_fl.sim.reset_stats()
    out = F.avg_pool2d(xd, **kwargs)
    out.backward(grad.to(DEVICE))
    assert_clean(out, xd.grad, ops=OPS)
    torch.testing.assert_close(out.detach().cpu(), expected.detach())
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


def test_module_and_out_variants():
    x = torch.randn(2, 3, 6, 6)
    torch.testing.assert_close(torch.nn.AvgPool2d(2).to(DEVICE)(x.to(DEVICE)).cpu(), torch.nn.AvgPool2d(2)(x))
    out = torch.empty(0).to(DEVICE)
    torch.ops.aten.avg_pool2d.out(x.to(DEVICE), [3, 3], [2, 2], [1, 1], False, True, None, out=out)
    want = torch.ops.aten.avg_pool2d(x, [3, 3], [2, 2], [1, 1], False, True, None)
    torch.testing.assert_close(out.cpu(), want)
    grad = torch.randn(want.shape)
    grad_input = torch.empty(0).to(DEVICE)
    torch.ops.aten.avg_pool2d_backward.grad_input(grad.to(DEVICE), x.to(DEVICE), [3, 3], [2, 2], [1, 1], False, True,
                                                  None, grad_input=grad_input)
    torch.testing.assert_close(grad_input.cpu(), torch.ops.aten.avg_pool2d_backward(
        grad, x, [3, 3], [2, 2], [1, 1], False, True, None))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_and_bfloat16(dtype):
    x = torch.randn(2, 3, 6, 6).to(dtype)
    xd = x.to(DEVICE).requires_grad_()
    out = F.avg_pool2d(xd, 3, 2, 1)
    out.float().sum().backward()
    xc = x.clone().requires_grad_()
    F.avg_pool2d(xc, 3, 2, 1).float().sum().backward()
    assert out.dtype == dtype and xd.grad.dtype == dtype
    torch.testing.assert_close(out.detach().cpu(), F.avg_pool2d(x, 3, 2, 1))
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


def test_empty_batch_launches_nothing():
    xd = torch.randn(0, 2, 4, 4).to(DEVICE).requires_grad_()
    torch_fl.sim.reset_stats()
    out = F.avg_pool2d(xd, 2)
    out.sum().backward()
    assert out.shape == (0, 2, 2, 2) and xd.grad.shape == (0, 2, 4, 4)
    launched = torch_fl.sim.stats()["op_launches"]
    assert not any(op.startswith("aclnnAvgPool") for op in launched), launched


def test_bad_arguments_are_errors_naming_the_op():
    x = torch.randn(1, 1, 6, 6).to(DEVICE)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.avg_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.avg_pool2d(torch.randn(1, 1, 1, 1).to(DEVICE), 3)
    assert torch.flagos.current_device() == CURRENT


def test_negative_control_avg_pool_without_guard(unguarded):
    x = torch.randn(1, 1, 4, 4).to(DEVICE)
    with pytest.raises(RuntimeError, match="aclnnAvgPool2d.*lives on device 2 but the launch runs on device 0"):
        F.avg_pool2d(x, 2)
