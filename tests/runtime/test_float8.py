"""8-bit floats on flagos (csrc/runtime/launch.cc's dtype map, the
simulator's, csrc/handwritten/copy.cc). CANN 8.x has aclDataTypes for them
(ACL_FLOAT8_E5M2 = 35, ACL_FLOAT8_E4M3FN = 36), but its operators take them
on Ascend 950 only, not on the simulated 910B3: a float8 tensor lives on
the device, moves and is copied there (a copy within one dtype is a copy of
bytes), while a conversion to or from it runs on the CPU, counted and
warned, and is refused by name in strict mode. A dtype CANN has no type for
(float8_e4m3fnuz) takes the same CPU path. diffusers' layerwise casting
stores weights in float8 and upcasts them per layer."""

import warnings

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

DEVICE = "flagos:1"  # flagos:0 stays current
X = torch.tensor([[-2.3, 1.1, 0.0], [448.0, -0.015, 3.7]])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "runs on the CPU for Float8_e4m3fn"
        yield


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_casts_as_on_the_cpu(dtype):
    x = X.to(DEVICE)
    torch_fl.sim.reset_stats()
    y = x.to(dtype)
    assert y.dtype == dtype and y.device == torch.device(DEVICE)
    assert torch.flagos.current_device() == 0
    assert torch.equal(y.cpu().view(torch.uint8), X.to(dtype).view(torch.uint8))
    back = y.to(torch.bfloat16)
    assert torch.equal(back.cpu(), X.to(dtype).to(torch.bfloat16))
    counts = torch_fl.sim.stats()["fallback_ops"]
    assert counts == {f"aten::_copy_from [{str(dtype).split('.')[1].capitalize()}]": 2}, counts


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_copies_within_the_dtype_stay_on_the_device(dtype):
    y = X.to(dtype).to(DEVICE)  # host to device: bytes
    torch_fl.sim.reset_stats()
    copies = [y.clone(), y.t().contiguous(), y[:, 1:].contiguous(), y.to("flagos:2"), y.t().cpu()]
    expected = [X.to(dtype), X.to(dtype).t(), X.to(dtype)[:, 1:], X.to(dtype), X.to(dtype).t()]
    for got, want in zip(copies, expected):
        assert got.dtype == dtype
        assert torch.equal(got.cpu().view(torch.uint8), want.contiguous().view(torch.uint8))
    stats = torch_fl.sim.stats()
    assert stats["fallback_ops"] == {}
    assert stats["rejected_launches"] == 0


def test_layerwise_casting_of_a_module():
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 3)
    stored = layer.to(DEVICE).to(torch.float8_e4m3fn)
    assert stored.weight.dtype == torch.float8_e4m3fn and stored.weight.device == torch.device(DEVICE)
    upcast = stored.to(torch.bfloat16)
    reference = torch.nn.Linear(4, 3)
    reference.load_state_dict({k: v.cpu() for k, v in layer.state_dict().items()})
    for got, want in zip(upcast.parameters(), reference.to(torch.float8_e4m3fn).to(torch.bfloat16).parameters()):
        assert torch.equal(got.cpu(), want)


def test_strict_mode_refuses_the_conversion_by_name():
    x = X.to(DEVICE)
    torch_fl._C._set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="aclnnInplaceCopy does not take Float8_e4m3fn, and strict mode"):
            x.to(torch.float8_e4m3fn)
        with pytest.raises(RuntimeError, match="ACLNN has no data type for Float8_e4m3fnuz"):
            x.to(torch.float8_e4m3fnuz)
    finally:
        torch_fl._C._set_strict(False)


def test_a_dtype_without_an_acl_type_runs_on_the_cpu():
    x = X.to(DEVICE)
    torch_fl.sim.reset_stats()
    y = x.to(torch.float8_e4m3fnuz)
    assert y.device == torch.device(DEVICE)
    assert torch.equal(y.cpu().view(torch.uint8), X.to(torch.float8_e4m3fnuz).view(torch.uint8))
    assert torch_fl.sim.stats()["fallback_ops"] == {"aten::_copy_from [Float8_e4m3fnuz]": 1}
