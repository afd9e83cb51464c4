"""2-d max pooling (csrc/handwritten/pooling.cc, aclnnMaxPool2dWithIndices and
aclnnMaxPool2dWithIndicesBackward) through F.max_pool2d and nn.MaxPool2d,
forward, indices and backward, against the CPU, with the tensors on flagos:2
while flagos:0 is current."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean

OPS = ["aclnnMaxPool2dWithIndices", "aclnnMaxPool2dWithIndicesBackward"]

# (label, input shape, kwargs of F.max_pool2d)
GEOMETRIES = [
    ("resnet stem", (2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("default stride", (1, 2, 6, 8), dict(kernel_size=2)),
    ("rectangular", (2, 2, 7, 10), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
    ("ceil mode", (1, 3, 7, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("ceil mode padded", (2, 1, 6, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("unbatched", (3, 8, 5), dict(kernel_size=3, stride=1, padding=1)),
]


@pytest.mark.parametrize("shape,kwargs", [g[1:] for g in GEOMETRIES], ids=[g[0] for g in GEOMETRIES])
def test_forward_indices_and_backward(shape, kwargs):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected, expected_idx = F.max_pool2d(xc, return_indices=True, **kwargs)
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
    expected.backward(grad)
    torch_fl.sim.reset_stats()
    out, idx = F.max_pool2d(xd, return_indices=True, **kwargs)
    out.backward(grad.to(DEVICE))
    assert_clean(out, idx, xd.grad, ops=OPS)
    assert idx.dtype == torch.int64
    assert torch.equal(idx.cpu(), expected_idx)  # ATen's flat index in the input plane
    torch.testing.assert_close(out.detach().cpu(), expected.detach())
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


def test_overlapping_windows_accumulate_gradients():
    # stride 1: a maximum shared by several windows gets the sum of their gradients.
    x = torch.zeros(1, 1, 4, 4)
    x[0, 0, 1, 1] = 5.0
    xd = x.to(DEVICE).requires_grad_()
    F.max_pool2d(xd, kernel_size=3, stride=1, padding=1).sum().backward()
    assert xd.grad.cpu()[0, 0, 1, 1].item() == 9.0


def test_indices_feed_max_unpool_on_the_cpu():
    x = torch.randn(1, 2, 6, 6)
    out, idx = F.max_pool2d(x.to(DEVICE), 2, return_indices=True)
    torch.testing.assert_close(F.max_unpool2d(out.cpu(), idx.cpu(), 2), F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2))


def test_out_variants():
    x = torch.randn(2, 3, 6, 6)
    out, idx = torch.empty(0).to(DEVICE), torch.empty(0, dtype=torch.long).to(DEVICE)
    torch.ops.aten.max_pool2d_with_indices.out(x.to(DEVICE), [3, 3], [2, 2], [1, 1], [1, 1], False, out=out, indices=idx)
    want, want_idx = torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
    torch.testing.assert_close(out.cpu(), want)
    assert torch.equal(idx.cpu(), want_idx)
    grad = torch.randn(want.shape)
    grad_input = torch.empty(0).to(DEVICE)
    torch.ops.aten.max_pool2d_with_indices_backward.grad_input(grad.to(DEVICE), x.to(DEVICE), [3, 3], [2, 2], [1, 1],
                                                               [1, 1], False, idx, grad_input=grad_input)
    torch.testing.assert_close(grad_input.cpu(), torch.ops.aten.max_pool2d_with_indices_backward(
        grad, x, [3, 3], [2, 2], [1, 1], [1, 1], False, want_idx))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_and_bfloat16(dtype):
    # The backward operator takes FLOAT only on Atlas A2/A3: the kernel runs it in float.
    x = torch.randn(2, 3, 6, 6).to(dtype)
    xd = x.to(DEVICE).requires_grad_()
    out = F.max_pool2d(xd, 3, 2, 1)
    out.float().sum().backward()
    xc = x.clone().requires_grad_()
    F.max_pool2d(xc, 3, 2, 1).float().sum().backward()
    assert out.dtype == dtype and xd.grad.dtype == dtype
    torch.testing.assert_close(out.detach().cpu(), F.max_pool2d(x, 3, 2, 1))
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


def test_empty_batch_launches_nothing():
    xd = torch.randn(0, 2, 4, 4).to(DEVICE).requires_grad_()
    torch_fl.sim.reset_stats()
    out = F.max_pool2d(xd, 2)
    out.sum().backward()
    assert out.shape == (0, 2, 2, 2) and xd.grad.shape == (0, 2, 4, 4)
    launched = torch_fl.sim.stats()["op_launches"]
    assert not any(op.startswith("aclnnMaxPool") for op in launched), launched
    assert torch_fl.sim.stats()["fallback_ops"] == {}


def test_limits_are_errors_naming_the_op():
    x = torch.randn(1, 1, 6, 6).to(DEVICE)
    with pytest.raises(RuntimeError, match="max_pool2d_with_indices on flagos: dilation \\(2, 2\\) is not supported"):
        F.max_pool2d(x, 2, dilation=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(torch.randn(1, 1, 1, 1).to(DEVICE), 3)
    assert torch.flagos.current_device() == CURRENT


def test_negative_control_max_pool_without_guard(unguarded):
    x = torch.randn(1, 1, 4, 4).to(DEVICE)
    with pytest.raises(RuntimeError,
                       match="aclnnMaxPool2dWithIndices.*lives on device 2 but the launch runs on device 0"):
        F.max_pool2d(x, 2)
