"""Convolution forward and backward (csrc/handwritten/convolution.cc:
aclnnConvolution, aclnnConvolutionBackward) against the CPU, with the tensors
on flagos:2 while flagos:0 is current."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean, strict

# (name, function, input shape, weight shape, bias, keyword arguments)
CONVS = [
    ("conv1d", F.conv1d, (2, 4, 9), (6, 4, 3), True, {}),
    ("conv1d strided dilated", F.conv1d, (2, 4, 11), (6, 2, 3), False, dict(stride=2, padding=2, dilation=2, groups=2)),
    ("conv2d", F.conv2d, (2, 3, 7, 6), (5, 3, 3, 3), True, dict(padding=1)),
    ("conv2d grouped", F.conv2d, (1, 6, 8, 8), (9, 2, 3, 1), True, dict(stride=(2, 1), padding=(1, 0), groups=3)),
    ("conv2d depthwise", F.conv2d, (2, 4, 6, 6), (4, 1, 3, 3), False, dict(padding=1, groups=4)),
    ("conv2d dilated", F.conv2d, (1, 2, 9, 9), (3, 2, 3, 3), True, dict(dilation=(2, 3), padding=(2, 1))),
    ("conv2d same odd", F.conv2d, (1, 3, 7, 8), (4, 3, 3, 5), True, dict(padding="same")),
    ("conv2d same even", F.conv2d, (1, 3, 7, 8), (4, 3, 4, 2), True, dict(padding="same", dilation=(1, 2))),
    ("conv2d valid 1x1", F.conv2d, (2, 8, 4, 4), (3, 8, 1, 1), True, dict(padding="valid")),
    ("conv3d", F.conv3d, (1, 2, 4, 5, 6), (3, 2, 3, 3, 3), True, dict(padding=1)),
    ("conv3d causal-like", F.conv3d, (1, 4, 3, 6, 6), (4, 2, 3, 3, 3), False,
     dict(stride=(1, 2, 2), padding=(0, 1, 1), groups=2)),
    ("conv_transpose1d", F.conv_transpose1d, (2, 4, 5), (4, 3, 3), True, dict(stride=2, output_padding=1)),
    ("conv_transpose2d", F.conv_transpose2d, (1, 4, 4, 5), (4, 2, 3, 3), True,
     dict(stride=2, padding=1, output_padding=1, groups=2)),
    ("conv_transpose2d dilated", F.conv_transpose2d, (2, 3, 3, 3), (3, 2, 2, 3), False,
     dict(stride=(1, 2), dilation=(2, 1), output_padding=(1, 0))),
    ("conv_transpose3d", F.conv_transpose3d, (1, 2, 2, 3, 3), (2, 3, 3, 2, 2), True,
     dict(stride=(1, 2, 2), padding=(1, 0, 0), output_padding=(0, 1, 1))),
]


def _bias_for(fn, weight_shape, kwargs, gen):
    channels = weight_shape[1] * kwargs.get("groups", 1) if "transpose" in fn.__name__ else weight_shape[0]
    return torch.randn(channels, generator=gen)


@pytest.mark.parametrize("name,fn,input_shape,weight_shape,bias,kwargs", CONVS, ids=[c[0] for c in CONVS])
def test_convolution_forward_and_backward(name, fn, input_shape, weight_shape, bias, kwargs):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(*input_shape, generator=gen)
    w = torch.randn(*weight_shape, generator=gen)
    b = _bias_for(fn, weight_shape, kwargs, gen) if bias else None
    cpu = [t.clone().requires_grad_() for t in (x, w, b) if t is not None]
    dev = [t.to(DEVICE).requires_grad_() for t in (x, w, b) if t is not None]
    torch_fl.sim.reset_stats()
    out = fn(*dev[:2], dev[2] if bias else None, **kwargs)
    expected = fn(*cpu[:2], cpu[2] if bias else None, **kwargs)
    grad = torch.randn(expected.shape, generator=gen)
    out.backward(grad.to(DEVICE))
    expected.backward(grad)
    assert_clean(out, *[t.grad for t in dev], ops=["aclnnConvolution", "aclnnConvolutionBackward"])
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=1e-4, atol=1e-4)
    for d, c in zip(dev, cpu):
        torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-4, atol=1e-4)


def test_conv_module_with_padding_same():
    torch.manual_seed(2)
    conv = torch.nn.Conv2d(3, 4, kernel_size=(4, 3), padding="same", dilation=(1, 2))
    x = torch.randn(2, 3, 6, 7)
    expected = conv(x)
    conv_dev = conv.to(DEVICE)
    torch_fl.sim.reset_stats()
    out = conv_dev(x.to(DEVICE))
    assert_clean(out, ops=["aclnnConvolution"])
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, True), (False, False, True)])
def test_backward_computes_only_the_gradients_autograd_needs(needs):
    gen = torch.Generator().manual_seed(3)
    x, w, b = torch.randn(2, 3, 6, 6, generator=gen), torch.randn(4, 3, 3, 3, generator=gen), torch.randn(4, generator=gen)
    cpu = [t.clone().requires_grad_(n) for t, n in zip((x, w, b), needs)]
    dev = [t.to(DEVICE).requires_grad_(n) for t, n in zip((x, w, b), needs)]
    F.conv2d(*cpu, padding=1).sum().backward()
    torch_fl.sim.reset_stats()
    F.conv2d(*dev, padding=1).sum().backward()
    assert_clean(ops=["aclnnConvolutionBackward"])
    for d, c, n in zip(dev, cpu, needs):
        assert (d.grad is not None) == n
        if n:
            torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-4, atol=1e-4)


def test_backward_overrideable_output_mask():
    gen = torch.Generator().manual_seed(4)
    g, x, w = torch.randn(1, 4, 3, 3, generator=gen), torch.randn(1, 2, 5, 5, generator=gen), torch.randn(4, 2, 3, 3, generator=gen)
    args = ([1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    gi, gw, gb = torch.ops.aten.convolution_backward_overrideable(g.to(DEVICE), x.to(DEVICE), w.to(DEVICE), *args,
                                                                 [False, True, True])
    ei, ew, eb = torch.ops.aten.convolution_backward(g, x, w, [4], *args, [False, True, True])
    assert gi is None
    torch.testing.assert_close(gw.cpu(), ew, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(gb.cpu(), eb, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 2e-2), (torch.bfloat16, 6e-2)])
def test_half_and_bfloat16_against_the_float_result(dtype, tol):
    gen = torch.Generator().manual_seed(5)
    x, w, b = torch.randn(2, 4, 6, 6, generator=gen), torch.randn(4, 2, 3, 3, generator=gen), torch.randn(4, generator=gen)
    xq, wq, bq = (t.to(dtype) for t in (x, w, b))
    dev = [t.to(DEVICE).requires_grad_() for t in (xq, wq, bq)]
    cpu = [t.float().requires_grad_() for t in (xq, wq, bq)]  # the same rounded values, in float
    torch_fl.sim.reset_stats()
    out = F.conv2d(*dev, padding=1, groups=2)
    out.float().sum().backward()
    expected = F.conv2d(*cpu, padding=1, groups=2)
    expected.sum().backward()
    assert out.dtype == dtype
    assert_clean(out, ops=["aclnnConvolution", "aclnnConvolutionBackward"])
    torch.testing.assert_close(out.detach().cpu().float(), expected.detach(), rtol=tol, atol=tol)
    for d, c in zip(dev, cpu):
        assert d.grad.dtype == dtype
        torch.testing.assert_close(d.grad.cpu().float(), c.grad, rtol=tol, atol=tol * 4)


def test_double_is_rejected_at_phase_one_as_cann_does():
    # CANN's aclnnConvolution takes FLOAT, FLOAT16 and BFLOAT16 (no DOUBLE):
    # strict mode shows the rejection; otherwise the call runs on the CPU.
    x, w = torch.randn(1, 2, 4, 4, dtype=torch.float64), torch.randn(3, 2, 3, 3, dtype=torch.float64)
    with strict(), pytest.raises(RuntimeError, match="aclnnConvolution.*161002"):
        F.conv2d(x.to(DEVICE), w.to(DEVICE))
    assert torch.flagos.current_device() == CURRENT
    out = F.conv2d(x.to(DEVICE), w.to(DEVICE))
    assert out.device == torch.device(DEVICE) and torch.flagos.current_device() == CURRENT
    torch.testing.assert_close(out.cpu(), F.conv2d(x, w))
    assert torch_fl.sim.stats()["fallback_ops"] == {"aten::convolution_overrideable [Double]": 1}


def test_empty_batch_launches_nothing():
    x, w = torch.randn(0, 2, 5, 5), torch.randn(3, 2, 3, 3)
    xd, wd = x.to(DEVICE).requires_grad_(), w.to(DEVICE).requires_grad_()
    torch_fl.sim.reset_stats()
    out = F.conv2d(xd, wd)
    assert out.shape == (0, 3, 3, 3) and out.device == torch.device(DEVICE)
    out.sum().backward()
    assert torch.equal(wd.grad.cpu(), torch.zeros(3, 2, 3, 3))
    assert "aclnnConvolution" not in torch_fl.sim.stats()["op_launches"]
    assert torch_fl.sim.stats()["fallback_ops"] == {}


def test_zero_input_channels_give_the_bias():
    x, w, b = torch.randn(2, 0, 4, 4), torch.randn(3, 0, 3, 3), torch.randn(3)
    out = F.conv2d(x.to(DEVICE), w.to(DEVICE), b.to(DEVICE))
    torch.testing.assert_close(out.cpu(), F.conv2d(x, w, b))


def test_operands_on_two_devices_are_rejected():
    x, w = torch.randn(1, 2, 4, 4).to(DEVICE), torch.randn(3, 2, 3, 3).to("flagos:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        F.conv2d(x, w)


def test_negative_control_convolution_without_guard(unguarded):
    x, w = torch.randn(1, 2, 4, 4).to(DEVICE), torch.randn(3, 2, 3, 3).to(DEVICE)
    with pytest.raises(RuntimeError, match="aclnnConvolution.*lives on device 2 but the launch runs on device 0"):
        F.conv2d(x, w)
