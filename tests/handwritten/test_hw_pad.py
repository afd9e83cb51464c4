"""Padding through F.pad, forward and backward, against the CPU, with the
tensors on flagos:2 while flagos:0 is current: reflection and replication
(csrc/handwritten/pad.cc) and constant_pad_nd (yaml/ops/padding.yaml)."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean, strict

# (label, input shape, pad); k-d padding for k = len(pad) // 2
PADS = [
    ("1d", (2, 3, 6), (2, 3)),
    ("1d unbatched", (3, 6), (0, 5)),
    ("2d", (2, 3, 4, 5), (1, 2, 3, 0)),
    ("2d unbatched", (3, 4, 5), (4, 4, 3, 3)),
    ("3d", (1, 2, 3, 4, 5), (1, 2, 0, 3, 2, 1)),
    ("3d causal time", (1, 2, 3, 4, 4), (1, 1, 1, 1, 2, 0)),
    ("2d negative", (2, 3, 5, 6), (-1, 2, 1, -2)),
    ("3d negative", (2, 3, 4, 5), (1, -1, 0, 2, -1, 1)),
]
# Replication only: padding as large as the dim or larger (CANN pads less than the dim: in steps).
LARGE = [
    ("1d beyond", (2, 3, 4), (7, 1)),
    ("2d beyond", (1, 2, 2, 2), (5, 9, 4, 1)),
    ("3d one frame and spatial", (1, 2, 1, 4, 4), (1, 1, 1, 1, 2, 0)),  # a single frame, padded causally
    ("3d beyond", (1, 2, 3, 4, 5), (2, 6, 4, 0, 3, 1)),
    ("2d cut and beyond", (1, 2, 3, 4), (-2, 6, 3, -1)),
]
OPS = {("reflect", 1): "aclnnReflectionPad1d", ("reflect", 2): "aclnnReflectionPad2d",
       ("reflect", 3): "aclnnReflectionPad3d", ("replicate", 1): "aclnnReplicationPad1d",
       ("replicate", 2): "aclnnReplicationPad2d", ("replicate", 3): "aclnnReplicationPad3d"}


def _check_pad(shape, pad, mode, dtype=torch.float32, tol=1e-6, **kwargs):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected = F.pad(xc, pad, mode=mode, **kwargs)
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1)).to(dtype)
    expected.backward(grad)
    torch_fl.sim.reset_stats()
    out = F.pad(xd, pad, mode=mode, **kwargs)
    out.backward(grad.to(DEVICE))
    assert out.dtype == dtype
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=tol, atol=tol)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=tol, atol=tol)
    return out, xd.grad


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("label,shape,pad", PADS, ids=[p[0] for p in PADS])
def test_reflect_and_replicate(mode, label, shape, pad):
    out, grad = _check_pad(shape, pad, mode)
    operator = OPS[mode, len(pad) // 2]
    assert_clean(out, grad, ops=[operator, operator + "Backward"])


@pytest.mark.parametrize("label,shape,pad", LARGE, ids=[p[0] for p in LARGE])
def test_replicate_beyond_the_dim_runs_in_steps(label, shape, pad):
    out, grad = _check_pad(shape, pad, "replicate")
    operator = OPS["replicate", len(pad) // 2]
    assert_clean(out, grad, ops=[operator, operator + "Backward"])
    if "beyond" in label:
        assert torch_fl.sim.stats()["op_launches"][operator] >= 2


def test_replicating_a_dim_of_one_expands_it():
    # CANN pads a dim by less than its size: a single frame is expanded instead,
    # and its gradient sums over the expansion.
    out, grad = _check_pad((1, 2, 1, 4, 4), (0, 0, 0, 0, 2, 0), "replicate")
    assert_clean(out, grad, ops=["aclnnInplaceCopy", "aclnnReduceSum"])
    assert "aclnnReplicationPad3d" not in torch_fl.sim.stats()["op_launches"]


@pytest.mark.parametrize("label,shape,pad", PADS[:6] + [("beyond", (2, 3, 4), (7, 1))], ids=lambda v: str(v))
def test_constant(label, shape, pad):
    out, grad = _check_pad(shape, pad, "constant", value=1.5)
    assert_clean(out, ops=["aclnnConstantPadNd"])


def test_constant_negative_padding_and_its_backward():
    # The backward of constant_pad_nd is constant_pad_nd with the padding negated.
    out, grad = _check_pad((2, 3, 5, 6), (-1, 2, 1, -2), "constant")
    assert_clean(out, grad, ops=["aclnnConstantPadNd"])
    assert torch_fl.sim.stats()["op_launches"]["aclnnConstantPadNd"] == 2


@pytest.mark.parametrize("dtype,value", [(torch.int64, 7), (torch.int32, 2.9), (torch.bool, 1), (torch.uint8, 200),
                                         (torch.float16, -0.25), (torch.complex64, 1.0)])
def test_constant_dtypes(dtype, value):
    x = (torch.randn(2, 3, 4) * 10).to(dtype)
    out = F.pad(x.to(DEVICE), (1, 2, 0, 1), value=value)
    assert torch.equal(out.cpu(), F.pad(x, (1, 2, 0, 1), value=value))


# (label, input shape, pad): an empty input is filled with the value; an
# empty output (a dim cut to 0) has nothing to write.
EMPTY_CONSTANT = [
    ("empty input", (2, 0, 3), (1, 1, 2, 0)),
    ("empty batch", (0, 2, 3), (1, 2)),
    ("cut to nothing", (2, 3, 4), (-2, -2)),
]


@pytest.mark.parametrize("label,shape,pad", EMPTY_CONSTANT, ids=[e[0] for e in EMPTY_CONSTANT])
@pytest.mark.parametrize("dtype,value", [(torch.float32, 1.5), (torch.int64, 7), (torch.bool, 1)])
def test_constant_empty(label, shape, pad, dtype, value):
    x = torch.randn(*shape).to(dtype)
    torch_fl.sim.reset_stats()
    out = F.pad(x.to(DEVICE), pad, value=value)
    assert_clean(out)
    expected = F.pad(x, pad, value=value)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert torch.equal(out.cpu(), expected)


@pytest.mark.parametrize("pad", [(1,), (1, 1, 1, 1, 1, 1), (-2, -2)], ids=str)
def test_constant_errors_are_raised_at_the_call(pad):
    x = torch.randn(2, 3)
    with pytest.raises(RuntimeError) as cpu:
        torch.constant_pad_nd(x, pad)
    torch_fl.sim.reset_stats()
    with pytest.raises(RuntimeError) as flagos:
        torch.constant_pad_nd(x.to(DEVICE), pad)
    assert torch_fl.sim.stats()["op_launches"] == {}
    assert torch.flagos.current_device() == CURRENT
    if min(pad) >= 0:  # the CPU narrows by a negative padding first, and fails there
        assert str(flagos.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    else:
        assert "resulted in a negative output size" in str(flagos.value)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 3e-2)])
def test_half_and_bfloat16(mode, dtype, tol):
    # bfloat16 2-d padding over 7 takes the float path of the backward (CANN: at most 7).
    for shape, pad in (((1, 2, 5, 6), (1, 2, 3, 0)), ((1, 2, 9, 10), (8, 1, 2, 8))):
        _check_pad(shape, pad, mode, dtype=dtype, tol=tol)


def test_reflect_padding_must_fit_the_dim():
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(torch.randn(1, 2, 3).to(DEVICE), (3, 0), mode="reflect")


def test_zero_padding_returns_a_new_tensor():
    xd = torch.randn(2, 3, 4).to(DEVICE)
    out = F.pad(xd, (0, 0), mode="replicate")
    assert out.data_ptr() != xd.data_ptr()
    torch.testing.assert_close(out.cpu(), xd.cpu())


def test_empty_batch_launches_nothing():
    xd = torch.randn(0, 2, 3, 3).to(DEVICE)
    torch_fl.sim.reset_stats()
    out = F.pad(xd, (1, 1, 1, 1), mode="reflect")
    assert out.shape == (0, 2, 5, 5)
    assert torch_fl.sim.stats()["op_launches"] == {}
    assert torch_fl.sim.stats()["fallback_ops"] == {}


def test_replication_of_bool_is_rejected_at_phase_one():
    # CANN's replication padding lists no BOOL.
    with strict(), pytest.raises(RuntimeError, match="aclnnReplicationPad1d.*161002"):
        F.pad(torch.ones(1, 2, 3, dtype=torch.bool).to(DEVICE), (1, 1), mode="replicate")
    assert torch.flagos.current_device() == CURRENT


def test_negative_control_pad_without_guard(unguarded):
    x = torch.randn(1, 2, 3).to(DEVICE)
    with pytest.raises(RuntimeError, match="aclnnReflectionPad1d.*lives on device 2 but the launch runs on device 0"):
        F.pad(x, (1, 1), mode="reflect")
