"""Upsampling (csrc/handwritten/upsample.cc, CANN's ops-cv operators) through
F.interpolate, forward and backward, against the CPU, with the tensors on
flagos:2 while flagos:0 is current."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import CURRENT, DEVICE, assert_clean, strict

# (mode, align_corners, rank, forward operator, backward operator)
MODES = [
    ("nearest", None, 4, "aclnnUpsampleNearest2d", "aclnnUpsampleNearest2dBackward"),
    ("nearest-exact", None, 4, "aclnnUpsampleNearestExact2d", "aclnnUpsampleNearestExact2dBackward"),
    ("bilinear", False, 4, "aclnnUpsampleBilinear2d", "aclnnUpsampleBilinear2dBackwardV2"),
    ("bilinear", True, 4, "aclnnUpsampleBilinear2d", "aclnnUpsampleBilinear2dBackwardV2"),
    ("bicubic", False, 4, "aclnnUpsampleBicubic2d", "aclnnUpsampleBicubic2dBackward"),
    ("bicubic", True, 4, "aclnnUpsampleBicubic2d", "aclnnUpsampleBicubic2dBackward"),
    ("nearest", None, 5, "aclnnUpsampleNearest3d", "aclnnUpsampleNearest3dBackward"),
    ("nearest-exact", None, 5, "aclnnUpsampleNearestExact3d", "aclnnUpsampleNearestExact3dBackward"),
    ("trilinear", False, 5, "aclnnUpsampleTrilinear3d", "aclnnUpsampleTrilinear3dBackward"),
    ("trilinear", True, 5, "aclnnUpsampleTrilinear3d", "aclnnUpsampleTrilinear3dBackward"),
]

# How the output size is given: F.interpolate passes scale factors on to the
# op (recompute_scale_factor=None), or only the size.
SIZES = [
    ("scale 2", dict(scale_factor=2.0)),
    ("scale 1.5", dict(scale_factor=1.5)),
    ("scale 0.5", dict(scale_factor=0.5)),
    ("size", dict(size=None)),  # filled per rank
    ("recomputed scale", dict(scale_factor=1.7, recompute_scale_factor=True)),
]


def _kwargs(sizing, rank):
    kwargs = dict(sizing)
    if "size" in kwargs:
        kwargs["size"] = (7, 5) if rank == 4 else (3, 7, 5)
    return kwargs


def _mode_id(mode):
    name, align, rank = mode[:3]
    return f"{name}{'-align' if align else ''}-{rank - 2}d"


@pytest.mark.parametrize("sizing", SIZES, ids=[s[0] for s in SIZES])
@pytest.mark.parametrize("mode", MODES, ids=[_mode_id(m) for m in MODES])
def test_interpolate_forward_and_backward(mode, sizing):
    name, align, rank, forward_op, backward_op = mode
    shape = (2, 3, 5, 6) if rank == 4 else (1, 2, 3, 4, 5)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    kwargs = _kwargs(sizing[1], rank)
    if align is not None:
        kwargs["align_corners"] = align
    xc, xd = x.clone().requires_grad_(), x.to(DEVICE).requires_grad_()
    expected = F.interpolate(xc, mode=name, **kwargs)
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
    expected.backward(grad)
    torch_fl.sim.reset_stats()
    out = F.interpolate(xd, mode=name, **kwargs)
    out.backward(grad.to(DEVICE))
    if forward_op == "aclnnUpsampleNearest2d" and "scale_factor" in kwargs and not kwargs.get("recompute_scale_factor"):
        forward_op = "aclnnUpsampleNearest2dV2"  # scales given: the operator that takes them
    assert_clean(out, xd.grad, ops=[forward_op, backward_op])
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)


def test_nearest_2d_without_scales_takes_the_operator_without_scales():
    x = torch.randn(1, 2, 3, 4)
    xd = x.to(DEVICE)
    torch_fl.sim.reset_stats()
    out = F.interpolate(xd, size=(6, 9), mode="nearest")
    assert set(torch_fl.sim.stats()["op_launches"]) == {"aclnnUpsampleNearest2d"}
    torch.testing.assert_close(out.cpu(), F.interpolate(x, size=(6, 9), mode="nearest"))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_and_bfloat16(mode, dtype):
    x = torch.randn(1, 3, 4, 5).to(dtype)
    expected = F.interpolate(x.float(), scale_factor=2.0, mode=mode).to(dtype)
    xd = x.to(DEVICE).requires_grad_()
    out = F.interpolate(xd, scale_factor=2.0, mode=mode)
    out.float().sum().backward()
    assert out.dtype == dtype and xd.grad.dtype == dtype
    torch.testing.assert_close(out.detach().cpu(), expected, rtol=1e-2, atol=1e-2)
    # the gradient of a sum, computed in float on the CPU
    xf = x.float().requires_grad_()
    F.interpolate(xf, scale_factor=2.0, mode=mode).sum().backward()
    torch.testing.assert_close(xd.grad.cpu().float(), xf.grad, rtol=2e-2, atol=2e-2)


def test_upsample_module_on_a_non_contiguous_input():
    buffer = torch.randn(2, 5, 4, 3)  # NHWC
    view = buffer.to(DEVICE).permute(0, 3, 1, 2)  # an NCHW view of it
    assert not view.is_contiguous()
    upsample = torch.nn.Upsample(scale_factor=2, mode="bilinear")
    torch.testing.assert_close(upsample(view).cpu(), upsample(buffer.permute(0, 3, 1, 2)))


def test_dtypes_cann_lacks_are_rejected_at_phase_one():
    # nearest-exact: FLOAT, FLOAT16, BFLOAT16, UINT8 (no DOUBLE); bilinear: no UINT8.
    with strict():
        with pytest.raises(RuntimeError, match="aclnnUpsampleNearestExact2d.*161002"):
            F.interpolate(torch.randn(1, 1, 2, 2, dtype=torch.float64).to(DEVICE), scale_factor=2.0,
                          mode="nearest-exact")
        with pytest.raises(RuntimeError, match="aclnnUpsampleBilinear2d.*161002"):
            torch.ops.aten.upsample_bilinear2d(torch.ones(1, 1, 2, 2, dtype=torch.uint8).to(DEVICE), [4, 4], False)
    assert torch.flagos.current_device() == CURRENT
    # Without strict mode the call runs on the CPU, counted per dtype.
    x = torch.randn(1, 1, 2, 2, dtype=torch.float64)
    out = F.interpolate(x.to(DEVICE), scale_factor=2.0, mode="nearest-exact")
    torch.testing.assert_close(out.cpu(), F.interpolate(x, scale_factor=2.0, mode="nearest-exact"))
    assert any(k.endswith("[Double]") for k in torch_fl.sim.stats()["fallback_ops"])


def test_uint8_nearest():
    x = torch.randint(0, 255, (1, 2, 3, 3), dtype=torch.uint8)
    out = F.interpolate(x.to(DEVICE), scale_factor=2.0, mode="nearest")
    assert torch.equal(out.cpu(), F.interpolate(x, scale_factor=2.0, mode="nearest"))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_empty_batch_launches_nothing(mode):
    xd = torch.randn(0, 2, 3, 3).to(DEVICE).requires_grad_()
    torch_fl.sim.reset_stats()
    out = F.interpolate(xd, scale_factor=2.0, mode=mode)
    out.sum().backward()
    assert out.shape == (0, 2, 6, 6) and xd.grad.shape == (0, 2, 3, 3)
    assert not [op for op in torch_fl.sim.stats()["op_launches"] if "Upsample" in op]  # sum's launches only
    assert torch_fl.sim.stats()["fallback_ops"] == {}


def test_errors_match_aten():
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
        torch.ops.aten.upsample_nearest2d(torch.randn(1, 1, 2, 2).to(DEVICE), [0, 4])
    with pytest.raises(RuntimeError, match="Expected grad_output to have the same shape as output"):
        torch.ops.aten.upsample_nearest2d_backward(torch.randn(1, 1, 4, 5).to(DEVICE), [4, 4], [1, 1, 2, 2])


def test_bicubic_double_runs_on_the_cpu_fallback():
    # CANN's bicubic operators take FLOAT, FLOAT16 and BFLOAT16 only.
    x = torch.randn(1, 1, 3, 3, dtype=torch.float64)
    with strict():
        with pytest.raises(RuntimeError, match="aclnnUpsampleBicubic2d.*161002"):
            F.interpolate(x.to(DEVICE), scale_factor=2.0, mode="bicubic")
    out = F.interpolate(x.to(DEVICE), scale_factor=2.0, mode="bicubic")
    torch.testing.assert_close(out.cpu(), F.interpolate(x, scale_factor=2.0, mode="bicubic"))
    assert any(k.endswith("[Double]") for k in torch_fl.sim.stats()["fallback_ops"])


def test_negative_control_upsample_without_guard(unguarded):
    x = torch.randn(1, 1, 2, 2).to(DEVICE)
    with pytest.raises(RuntimeError, match="aclnnUpsampleNearest2dV2.*lives on device 2 but the launch runs on device 0"):
        F.interpolate(x, scale_factor=2.0, mode="nearest")
    with pytest.raises(RuntimeError, match="aclnnUpsampleBicubic2d.*lives on device 2 but the launch runs on device 0"):
        F.interpolate(x, scale_factor=2.0, mode="bicubic")
    grad = torch.randn(1, 1, 4, 4).to(DEVICE)
    with pytest.raises(RuntimeError, match="aclnnUpsampleBicubic2dBackward.*lives on device 2 but the launch runs"):
        torch.ops.aten.upsample_bicubic2d_backward(grad, [4, 4], [1, 1, 2, 2], False)
