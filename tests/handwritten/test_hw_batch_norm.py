"""Batch norm (csrc/handwritten/batch_norm.cc, aclnnBatchNorm and
aclnnBatchNormBackward) through nn.BatchNorm and F.batch_norm, training and
evaluation, forward and backward, against the CPU, with the tensors on
flagos:2 while flagos:0 is current."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean

OPS = ["aclnnBatchNorm", "aclnnBatchNormBackward"]


def _pair(module_cls, channels, affine=True, track=True, seed=0):
    torch.manual_seed(seed)
    cpu = module_cls(channels, affine=affine, track_running_stats=track)
    if affine:
        with torch.no_grad():
            cpu.weight.uniform_(0.5, 1.5)
            cpu.bias.uniform_(-0.5, 0.5)
    dev = module_cls(channels, affine=affine, track_running_stats=track)
    dev.load_state_dict(cpu.state_dict())
    return cpu, dev.to(DEVICE)


# (module, input shape): BatchNorm1d on (N, C) and (N, C, L), 2d, 3d.
SHAPES = [(torch.nn.BatchNorm1d, (6, 4)), (torch.nn.BatchNorm1d, (3, 4, 5)),
          (torch.nn.BatchNorm2d, (2, 3, 5, 4)), (torch.nn.BatchNorm3d, (2, 2, 3, 4, 3))]


@pytest.mark.parametrize("affine,track", [(True, True), (False, True), (True, False)],
                         ids=["affine", "no-affine", "no-running-stats"])
@pytest.mark.parametrize("module_cls,shape", SHAPES, ids=[f"{m.__name__}-{len(s)}d" for m, s in SHAPES])
def test_training_forward_backward_and_running_stats(module_cls, shape, affine, track):
    cpu, dev = _pair(module_cls, shape[1], affine, track)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 2 + 0.5
    grad = torch.randn(*shape, generator=torch.Generator().manual_seed(2))
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected = cpu(xc)
    expected.backward(grad)
    torch_fl.sim.reset_stats()
    out = dev(xd)
    out.backward(grad.to(DEVICE))
    assert_clean(out, xd.grad, ops=OPS)
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-5)
    if affine:
        torch.testing.assert_close(dev.weight.grad.cpu(), cpu.weight.grad, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(dev.bias.grad.cpu(), cpu.bias.grad, rtol=1e-4, atol=1e-5)
    if track:  # running statistics updated with momentum, the variance unbiased
        torch.testing.assert_close(dev.running_mean.cpu(), cpu.running_mean, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var, rtol=1e-5, atol=1e-6)
        assert dev.num_batches_tracked.item() == 1


def test_eval_uses_running_stats_and_backward_runs_on_the_device():
    cpu, dev = _pair(torch.nn.BatchNorm2d, 3)
    with torch.no_grad():
        for m in (cpu, dev):
            m.running_mean.copy_(torch.tensor([0.5, -1.0, 2.0]))
            m.running_var.copy_(torch.tensor([0.25, 4.0, 1.5]))
    cpu.eval(), dev.eval()
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(3))
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected = cpu(xc)
    expected.sum().backward()
    torch_fl.sim.reset_stats()
    out = dev(xd)
    out.sum().backward()
    assert_clean(out, xd.grad, ops=OPS)
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dev.weight.grad.cpu(), cpu.weight.grad, rtol=1e-4, atol=1e-5)
    # evaluation leaves the running statistics alone
    torch.testing.assert_close(dev.running_var.cpu(), torch.tensor([0.25, 4.0, 1.5]))


def test_saved_statistics_are_atens_inverse_std():
    # CANN's saveInvstd is the batch variance on Atlas A2/A3: the kernel converts it.
    x = torch.randn(4, 3, 5, generator=torch.Generator().manual_seed(4)) * 3
    expected = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-3)
    out = torch.native_batch_norm(x.to(DEVICE), None, None, None, None, True, 0.1, 1e-3)
    for got, want in zip(out, expected):
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
    assert out[2].cpu().min() < 1.0  # an inverse std (variance ~9), not a variance


def test_eval_statistics_are_empty():
    x, rm, rv = torch.randn(2, 3, 4), torch.zeros(3), torch.ones(3)
    out, mean, invstd = torch.native_batch_norm(x.to(DEVICE), None, None, rm.to(DEVICE), rv.to(DEVICE), False, 0.1,
                                                1e-5)
    assert mean.shape == (0,) and invstd.shape == (0,)
    torch.testing.assert_close(out.cpu(), x / (1 + 1e-5) ** 0.5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_input_with_float_parameters(dtype):
    # As autocast leaves BatchNorm: reduced-precision activations, float parameters and statistics.
    cpu, dev = _pair(torch.nn.BatchNorm2d, 3)
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(5)).to(dtype)
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected = cpu(xc)
    expected.float().sum().backward()
    out = dev(xd)
    out.float().sum().backward()
    assert out.dtype == dtype and xd.grad.dtype == dtype
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(dev.weight.grad.cpu(), cpu.weight.grad, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var, rtol=1e-3, atol=1e-3)


def test_double_is_rejected_at_phase_one():
    """aclnnBatchNorm takes no float64: phase 1 rejects it; strict mode shows CANN's status
    (otherwise the call runs on the CPU, tests/contract/test_dtype_coverage.py)."""
    strict = torch_fl._C._strict()
    torch_fl._C._set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="aclnnBatchNorm.*161002"):
            F.batch_norm(torch.randn(2, 3, dtype=torch.float64).to(DEVICE), None, None, training=True)
    finally:
        torch_fl._C._set_strict(strict)
    assert torch.flagos.current_device() == CURRENT


def test_errors_name_the_op():
    x = torch.randn(2, 3, 4).to(DEVICE)
    with pytest.raises(RuntimeError, match="native_batch_norm: running_mean and running_var must be defined"):
        torch.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="native_batch_norm: expected weight to have 3 elements"):
        torch.native_batch_norm(x, torch.ones(4).to(DEVICE), None, None, None, True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.native_batch_norm(x, torch.ones(3).to("flagos:1"), None, None, None, True, 0.1, 1e-5)


def test_negative_control_batch_norm_without_guard(unguarded):
    x = torch.randn(2, 3, 4).to(DEVICE)
    with pytest.raises(RuntimeError, match="aclnnBatchNorm.*lives on device 2 but the launch runs on device 0"):
        F.batch_norm(x, None, None, training=True)


def test_export_overloads_with_autograd():
    # torch.export / torch.compile decompose batch norm into _batch_norm_with_update,
    # whose derivative is batch_norm_backward: both on the device.
    x = torch.randn(3, 2, 4, generator=torch.Generator().manual_seed(6))
    w, b = torch.rand(2) + 0.5, torch.randn(2)
    results = {}
    for device in ("cpu", DEVICE):
        xs, ws = x.to(device).detach().requires_grad_(), w.to(device).detach().requires_grad_()
        rm, rv = torch.zeros(2).to(device), torch.ones(2).to(device)
        torch_fl.sim.reset_stats()
        out = torch.ops.aten._batch_norm_with_update(xs, ws, b.to(device), rm, rv, 0.1, 1e-5)[0]
        (out * out).sum().backward()
        if device != "cpu":
            assert_clean(out, xs.grad, ws.grad, ops=OPS)
        results[device] = [t.detach().cpu() for t in (out, xs.grad, ws.grad, rm, rv)]
    for got, want in zip(results[DEVICE], results["cpu"]):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
