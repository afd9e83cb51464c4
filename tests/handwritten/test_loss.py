"""mse_loss and its backward on aclnnMseLoss / aclnnMseLossBackward: the
three reductions, broadcasting, mixed dtypes, the guard (negative control)
and CANN's rejections, with the tensors on flagos:2 while flagos:0 is current."""

import pytest
import torch
import torch.nn.functional as F

import torch_fl

from hw_util import CURRENT, DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected

pytestmark = needs_devices


@pytest.fixture(autouse=True)
def current_device():
    torch.flagos.set_device(CURRENT)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_forward_and_backward_match_the_cpu(reduction):
    x, y = torch.randn(3, 4, 5), torch.randn(3, 4, 5)
    xd, yd = on_device(x, y)
    xd.requires_grad_()
    loss = F.mse_loss(xd, yd, reduction=reduction)
    (grad,) = torch.autograd.grad(loss.sum(), xd)
    assert_clean(loss, grad, ops=("aclnnMseLoss", "aclnnMseLossBackward"))
    xc = x.clone().requires_grad_()
    expected = F.mse_loss(xc, y, reduction=reduction)
    assert_equal(loss.detach(), expected.detach())
    assert_equal(grad, torch.autograd.grad(expected.sum(), xc)[0])


def test_broadcast_target_and_out_forms():
    x, y = torch.randn(2, 3), torch.randn(3)
    xd, yd = on_device(x, y)
    out = torch.empty(0, device=DEVICE)
    torch.ops.aten.mse_loss.out(xd, yd, 0, out=out)
    assert_equal(out, torch.ops.aten.mse_loss(x, y, 0))
    g = torch.randn(2, 3)
    grad_input = torch.empty(0, device=DEVICE)
    torch.ops.aten.mse_loss_backward.grad_input(g.to(DEVICE), xd, yd, 0, grad_input=grad_input)
    assert_equal(grad_input, torch.ops.aten.mse_loss_backward(g, x, y, 0))
    assert torch.flagos.current_device() == CURRENT


def test_mixed_dtypes_compute_in_the_promoted_dtype():
    x, y = torch.randn(4, dtype=torch.float16), torch.randn(4)
    xd, yd = on_device(x, y)
    loss = torch.ops.aten.mse_loss(xd, yd, 1)
    assert loss.dtype == torch.float32
    assert_equal(loss, torch.ops.aten.mse_loss(x, y, 1))


def test_guard_off_launches_on_the_ambient_device(unguarded):
    xd, yd = on_device(torch.randn(4), torch.randn(4))
    with rejected():
        torch.ops.aten.mse_loss(xd, yd, 1)


def test_cann_rejects_float64_and_aten_a_bad_reduction():
    # (strict mode shows CANN's verdict; otherwise float64 runs on the CPU, counted)
    xd, yd = on_device(torch.randn(4, dtype=torch.float64), torch.randn(4, dtype=torch.float64))
    strict = torch_fl._C._strict()
    torch_fl._C._set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="aclnnMseLoss.*161002"):
            torch.ops.aten.mse_loss(xd, yd, 1)
    finally:
        torch_fl._C._set_strict(strict)
    xf, yf = on_device(torch.randn(4), torch.randn(4))
    # ATen's meta function refuses the reduction, as on the CPU (an internal assert there)
    with pytest.raises(RuntimeError, match=r"reduction == Reduction::Mean \|\| reduction == Reduction::Sum"):
        torch.ops.aten.mse_loss(xf, yf, 3)
    assert torch.flagos.current_device() == CURRENT


def test_mixed_devices_name_the_op_and_devices():
    xd = torch.randn(4, device=DEVICE)
    other = torch.randn(4, device="flagos:1")
    with pytest.raises(RuntimeError, match="flagos:2.*flagos:1|flagos:1.*flagos:2"):
        torch.ops.aten.mse_loss(xd, other, 1)
    assert torch.flagos.current_device() == CURRENT
