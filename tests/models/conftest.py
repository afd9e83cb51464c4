"""Real models from diffusers and transformers, built from small configs (no
downloads), run on flagos devices as users run them: on one device that is
not the current one, and split over several devices with accelerate's
dispatch_model (forward pre-hooks that move activations), with no
set_device anywhere. Strict mode (FLAGOS_STRICT=1's switch) is on: an op
without a flagos kernel fails the test instead of running on the CPU."""

from __future__ import annotations

import warnings

import pytest
import torch

import torch_fl

pytest.importorskip("diffusers")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

CURRENT = 0  # the current device throughout: every model runs elsewhere or spans it


@pytest.fixture(autouse=True)
def strict_and_current_device():
    """No CPU fallback; the current device is flagos:0 before and after."""
    warnings.filterwarnings("ignore", category=FutureWarning)
    torch.flagos.set_device(CURRENT)
    torch_fl._C._reset_fallback_counts()
    torch_fl._C._set_strict(True)
    try:
        yield
    finally:
        torch_fl._C._set_strict(False)
    assert torch_fl._C._fallback_counts() == {}
    assert torch.flagos.current_device() == CURRENT
