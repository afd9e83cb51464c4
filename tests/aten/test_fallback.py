"""The CPU fallback (csrc/aten/fallback.cc) keeps the device's memory layout
when an op writes a tensor that shares memory: an out= tensor that
partially overlaps an input, or an expanded out= tensor, reaches the CPU
kernel as such, so it refuses them at the call as it does on the CPU (and a
full in-place alias computes as on the CPU). logcumsumexp has no flagos
kernel: it is the probe. (ATen's own fallback, which copies each argument
on its own, gave the first case a value and the second a stream error at
the next synchronize; it still runs every call that shares no memory, the
last test.)"""

import warnings

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

DEVICE = "flagos:1"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "has no flagos kernel; it runs on the CPU"
        yield


def _both(fn):
    """fn(device) on the CPU and on flagos: (CPU error or value, flagos error or value)."""
    results = []
    for device in ("cpu", DEVICE):
        try:
            value = fn(device)
            if device != "cpu":
                torch.flagos.synchronize(1)
            results.append(value.cpu() if isinstance(value, torch.Tensor) else value)
        except RuntimeError as error:
            results.append(str(error).splitlines()[0])
    return results


def test_a_partially_overlapping_out_is_refused_as_on_the_cpu():
    def call(device):
        x = torch.arange(6.0, device=device)
        return torch.logcumsumexp(x[0:3], 0, out=x[1:4])

    cpu, flagos = _both(call)
    assert isinstance(cpu, str) and "written-to tensor refer to a single memory location" in cpu
    assert flagos == cpu
    assert torch_fl.sim.stats()["fallback_ops"].get("aten::_logcumsumexp.out", 0) >= 1


def test_an_expanded_out_is_refused_at_the_call():
    def call(device):
        out = torch.zeros(1, device=device).expand(3)
        return torch.logcumsumexp(torch.ones(3, device=device), 0, out=out)

    cpu, flagos = _both(call)
    assert isinstance(cpu, str) and "more than one element of the written-to tensor" in cpu
    assert flagos == cpu


def test_an_out_that_is_its_input_computes_as_on_the_cpu():
    def call(device):
        x = torch.tensor([1.0, 2.0, 0.5], device=device)
        result = torch.logcumsumexp(x, 0, out=x)
        assert result is x  # the written argument itself comes back
        return x

    cpu, flagos = _both(call)
    torch.testing.assert_close(flagos, cpu)


def test_the_plain_path_copies_arguments_one_by_one():
    # Nothing shared: the ordinary fallback, with a resized out= tensor.
    def call(device):
        out = torch.empty(0, device=device)
        torch.logcumsumexp(torch.tensor([1.0, 2.0], device=device), 0, out=out)
        return out

    cpu, flagos = _both(call)
    torch.testing.assert_close(flagos, cpu)


def test_an_op_with_no_cpu_kernel_is_refused_by_name():
    # _fused_dropout has CUDA kernels only: the fallback must not hand flagos
    # tensors to a CPU dispatch that cannot run them.
    assert not torch._C._dispatch_has_computed_kernel_for_dispatch_key("aten::_fused_dropout", "CPU")
    x = torch.ones(4, device=DEVICE)
    torch_fl.sim.reset_stats()
    with pytest.raises(NotImplementedError, match="flagos: aten::_fused_dropout has no flagos kernel and no CPU kernel"):
        torch._fused_dropout(x, 0.5)
    assert torch_fl.sim.stats()["fallback_ops"] == {}


def test_negative_control_an_op_with_a_cpu_kernel_still_falls_back():
    x = torch.randn(5, device=DEVICE)
    torch_fl.sim.reset_stats()
    torch.testing.assert_close(torch.logcumsumexp(x, 0).cpu(), torch.logcumsumexp(x.cpu(), 0))
    assert torch_fl.sim.stats()["fallback_ops"] == {"aten::_logcumsumexp": 1}
