"""gelu and gelu_backward in both approximate modes, on a non-current device (generated from
yaml/ops/unary_math.yaml and activation_backward.yaml, once handwritten: the string `approximate`
reaches CANN through `enums:`)."""

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gelu_forward_and_backward_on_other_device(approximate, dtype):
    x = torch.randn(4, 5, dtype=dtype)
    xd = x.to("flagos:2").requires_grad_()
    xc = x.clone().requires_grad_()
    torch_fl.sim.reset_stats()
    y = torch.nn.functional.gelu(xd, approximate=approximate)
    y.backward(torch.ones_like(y))
    expected = torch.nn.functional.gelu(xc, approximate=approximate)
    expected.backward(torch.ones_like(expected))
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    assert y.device == torch.device("flagos", 2)
    assert torch.allclose(y.detach().cpu(), expected.detach(), atol=tol, rtol=tol)
    assert torch.allclose(xd.grad.cpu(), xc.grad, atol=tol, rtol=tol)
    stats = torch_fl.sim.stats()
    assert stats["op_launches"].get("aclnnGeluV2") == 1
    assert stats["op_launches"].get("aclnnGeluBackwardV2") == 1
    assert stats["fallback_ops"] == {}
    assert stats["rejected_launches"] == 0
    assert torch.flagos.current_device() == 0


def test_gelu_in_place_and_out():
    x = torch.randn(6)
    xd = x.to("flagos:1")
    out = torch.empty(0, device="flagos:1")
    torch.ops.aten.gelu.out(xd, approximate="tanh", out=out)
    assert torch.allclose(out.cpu(), torch.nn.functional.gelu(x, approximate="tanh"), atol=1e-6)
    torch.ops.aten.gelu_(xd)
    assert torch.allclose(xd.cpu(), torch.nn.functional.gelu(x), atol=1e-6)


def test_gelu_rejects_unknown_mode():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        torch.ops.aten.gelu(torch.ones(2, device="flagos:1"), approximate="fast")


def test_negative_control_gelu_without_guard(unguarded):
    x = torch.randn(3).to("flagos:2")
    with pytest.raises(RuntimeError, match="aclnnGeluV2.*lives on device 2 but the launch runs on device 0"):
        torch.nn.functional.gelu(x)
