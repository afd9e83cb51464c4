"""2-d pooling through F.max_pool2d and F.avg_pool2d (and nn.MaxPool2d,
nn.AvgPool2d), forward, indices and backward, against the CPU, with the
tensors on flagos:2 while flagos:0 is current: max_pool2d_with_indices,
avg_pool2d and its backward are registry entries (yaml/ops/pooling.yaml),
max_pool2d_with_indices_backward a handwritten body
(csrc/handwritten/pooling.cc)."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean

aten = torch.ops.aten

OPS = {"max": ["aclnnMaxPool2dWithIndices", "aclnnMaxPool2dWithIndicesBackward"],
       "avg": ["aclnnAvgPool2d", "aclnnAvgPool2dBackward"]}

# (kind, label, input shape, kwargs of F.max_pool2d / F.avg_pool2d)
GEOMETRIES = [
    ("max", "resnet stem", (2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("max", "default stride", (1, 2, 6, 8), dict(kernel_size=2)),
    ("max", "rectangular", (2, 2, 7, 10), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
    ("max", "ceil mode", (1, 3, 7, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("max", "ceil mode padded", (2, 1, 6, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max", "unbatched", (3, 8, 5), dict(kernel_size=3, stride=1, padding=1)),
    ("avg", "downsample", (2, 3, 8, 8), dict(kernel_size=2, stride=2)),
    ("avg", "padded, count pad", (2, 2, 7, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("avg", "padded, exclude pad", (1, 3, 7, 9), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("avg", "rectangular", (2, 2, 7, 10), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
    ("avg", "ceil mode", (1, 3, 7, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("avg", "divisor override", (2, 1, 6, 6), dict(kernel_size=3, stride=1, divisor_override=4)),
    ("avg", "unbatched", (3, 8, 5), dict(kernel_size=3, stride=1, padding=1)),
]


def pool(kind, x, *args, **kwargs):
    """(output, indices) of F.max_pool2d, (output, None) of F.avg_pool2d."""
    if kind == "max":
        return F.max_pool2d(x, *args, return_indices=True, **kwargs)
    return F.avg_pool2d(x, *args, **kwargs), None


@pytest.mark.parametrize("kind,shape,kwargs", [(g[0], *g[2:]) for g in GEOMETRIES],
                         ids=[f"{g[0]} {g[1]}" for g in GEOMETRIES])
def test_forward_and_backward(kind, shape, kwargs):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected, expected_idx = pool(kind, xc, **kwargs)
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
    expected.backward(grad)
    torch_fl.sim.reset_stats()
    out, idx = pool(kind, xd, **kwargs)
    out.backward(grad.to(DEVICE))
    assert_clean(out, xd.grad, ops=OPS[kind])
    if kind == "max":
        assert idx.device == torch.device(DEVICE) and idx.dtype == torch.int64
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


def test_modules():
    x = torch.randn(2, 3, 6, 6)
    for module in (torch.nn.MaxPool2d(2), torch.nn.AvgPool2d(2)):
        torch.testing.assert_close(module.to(DEVICE)(x.to(DEVICE)).cpu(), module(x))


GEOMETRY = ([3, 3], [2, 2], [1, 1])  # kernel, stride, padding


def test_max_pool_out_variants():
    x = torch.randn(2, 3, 6, 6)
    out, idx = torch.empty(0).to(DEVICE), torch.empty(0, dtype=torch.long).to(DEVICE)
    aten.max_pool2d_with_indices.out(x.to(DEVICE), *GEOMETRY, [1, 1], False, out=out, indices=idx)
    want, want_idx = aten.max_pool2d_with_indices(x, *GEOMETRY, [1, 1], False)
    torch.testing.assert_close(out.cpu(), want)
    assert torch.equal(idx.cpu(), want_idx)
    grad = torch.randn(want.shape)
    grad_input = torch.empty(0).to(DEVICE)
    aten.max_pool2d_with_indices_backward.grad_input(grad.to(DEVICE), x.to(DEVICE), *GEOMETRY, [1, 1], False, idx,
                                                     grad_input=grad_input)
    torch.testing.assert_close(grad_input.cpu(),
                               aten.max_pool2d_with_indices_backward(grad, x, *GEOMETRY, [1, 1], False, want_idx))


def test_avg_pool_out_variants():
    x = torch.randn(2, 3, 6, 6)
    out = torch.empty(0).to(DEVICE)
    aten.avg_pool2d.out(x.to(DEVICE), *GEOMETRY, False, True, None, out=out)
    want = aten.avg_pool2d(x, *GEOMETRY, False, True, None)
    torch.testing.assert_close(out.cpu(), want)
    grad = torch.randn(want.shape)
    grad_input = torch.empty(0).to(DEVICE)
    aten.avg_pool2d_backward.grad_input(grad.to(DEVICE), x.to(DEVICE), *GEOMETRY, False, True, None,
                                        grad_input=grad_input)
    torch.testing.assert_close(grad_input.cpu(), aten.avg_pool2d_backward(grad, x, *GEOMETRY, False, True, None))


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_and_bfloat16(kind, dtype):
    # Max pooling's backward operator takes FLOAT only on Atlas A2/A3: the kernel runs it in float.
    x = torch.randn(2, 3, 6, 6).to(dtype)
    xd = x.to(DEVICE).requires_grad_()
    out, _ = pool(kind, xd, 3, 2, 1)
    out.float().sum().backward()
    xc = x.clone().requires_grad_()
    expected, _ = pool(kind, xc, 3, 2, 1)
    expected.float().sum().backward()
    assert out.dtype == dtype and xd.grad.dtype == dtype
    torch.testing.assert_close(out.detach().cpu(), expected.detach())
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_empty_batch_matches_the_cpu_and_launches_no_pooling(kind):
    x = torch.randn(0, 2, 4, 4)
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected, expected_idx = pool(kind, xc, 2)
    expected.sum().backward()
    torch_fl.sim.reset_stats()
    out, idx = pool(kind, xd, 2)
    out.sum().backward()
    assert_clean(out, xd.grad)
    assert out.shape == expected.shape == (0, 2, 2, 2) and xd.grad.shape == (0, 2, 4, 4)
    assert out.dtype == expected.dtype
    if kind == "max":
        assert idx.shape == expected_idx.shape and idx.dtype == torch.int64
    # CANN's pooling operators take no empty tensor: none of them launched.
    launched = torch_fl.sim.stats()["op_launches"]
    assert not any(op.startswith(("aclnnMaxPool", "aclnnAvgPool")) for op in launched), launched


def test_bad_arguments_are_errors_naming_the_op():
    x = torch.randn(1, 1, 6, 6).to(DEVICE)
    for kind in ("max", "avg"):
        with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
            pool(kind, x, 2, padding=2)
        with pytest.raises(RuntimeError, match="Output size is too small"):
            pool(kind, torch.randn(1, 1, 1, 1).to(DEVICE), 3)
    with pytest.raises(RuntimeError, match="max_pool2d_with_indices on flagos: dilation \\(2, 2\\) is not supported"):
        F.max_pool2d(x, 2, dilation=2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    assert torch.flagos.current_device() == CURRENT


def test_backward_gradient_dtype_is_checked_as_the_cpu_does():
    x, grad = torch.randn(1, 2, 6, 6), torch.randn(1, 2, 3, 3, dtype=torch.float64)
    args = ([2, 2], [2, 2], [0, 0], False, True, None)
    with pytest.raises(RuntimeError) as cpu:
        aten.avg_pool2d_backward(grad, x, *args)
    with pytest.raises(RuntimeError, match="expected dtype float for `gradOutput` but got dtype double") as flagos:
        aten.avg_pool2d_backward(grad.to(DEVICE), x.to(DEVICE), *args)
    assert str(flagos.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    assert torch_fl.sim.stats()["op_launches"].get("aclnnAvgPool2dBackward", 0) == 0


@pytest.mark.parametrize("kind,operator", [("max", "aclnnMaxPool2dWithIndices"), ("avg", "aclnnAvgPool2d")])
def test_negative_control_pool_without_guard(kind, operator, unguarded):
    x = torch.randn(1, 1, 4, 4).to(DEVICE)
    with pytest.raises(RuntimeError, match=f"{operator}.*lives on device 2 but the launch runs on device 0"):
        pool(kind, x, 2)

