"""Lenient kernels (FLAGOS_SIM_LENIENT=1, torch_fl.sim.set_lenient): the
simulator's operators compute with ATen's CPU kernels, which check their
arguments when they run; CANN's kernels do not. In lenient mode a kernel
that ATen refuses writes NaN into its outputs instead of failing its stream,
so that a check the backend's wrapper misses shows as a wrong value (as on
hardware), never as an error at the next synchronize.

A gather whose index values are out of range is the probe: no wrapper can
check index values without reading device memory, so the kernel is what
refuses them."""

import os
import subprocess
import sys

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

DEVICE = "flagos:1"


def _gather_out_of_range():
    x = torch.arange(6.0, device=DEVICE).reshape(2, 3)
    index = torch.tensor([[5, 0, 1]], device=DEVICE)  # 5 is out of range for dim 0 (size 2)
    return torch.gather(x, 0, index)


def test_by_default_a_refused_kernel_fails_its_stream():
    torch_fl.sim.set_lenient(False)
    result = _gather_out_of_range()  # launched: the index values are checked only when it runs
    with pytest.raises(RuntimeError, match="index 5 is out of bounds"):
        torch.flagos.synchronize(1)
    assert torch_fl.sim.stats()["lenient_kernel_errors"] == 0
    del result


def test_lenient_kernels_write_nan_and_count_it():
    torch_fl.sim.set_lenient(True)
    try:
        result = _gather_out_of_range()
        torch.flagos.synchronize(1)  # nothing to report: the kernel "succeeded"
        assert torch.isnan(result.cpu()).all()
        assert torch_fl.sim.stats()["lenient_kernel_errors"] == 1
        # A kernel ATen accepts is unaffected.
        ok = torch.gather(torch.arange(6.0, device=DEVICE).reshape(2, 3), 0, torch.tensor([[1, 0, 1]], device=DEVICE))
        assert ok.cpu().tolist() == [[3.0, 1.0, 5.0]]
        assert torch_fl.sim.stats()["lenient_kernel_errors"] == 1
    finally:
        torch_fl.sim.set_lenient(False)


def test_the_environment_variable_turns_it_on():
    code = ("import torch, torch_fl; print(torch_fl.sim.lenient())")
    env = dict(os.environ, FLAGOS_SIM_LENIENT="1")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
