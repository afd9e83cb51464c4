"""Setup of the device suite, on top of tests/conftest.py (device 0 current,
counters reset, guards on, sanitizer on, error mode): every test also ends
with the sanitizer and the executor cache switched back on and the faults
cleared, whatever it switched off."""

import pytest

try:
    import torch

    import torch_fl
except ImportError:  # the backend is not built
    torch_fl = None


@pytest.fixture(autouse=True)
def _restore_switches():
    yield
    if torch_fl is None:
        return
    torch_fl._C._set_guards_enabled(True)
    torch_fl._C._set_device_check(True)
    torch_fl._C._set_executor_cache(True)
    torch_fl.sim.clear_faults()
    torch_fl.sim.set_mismatch_mode("error")
    torch.flagos.set_device(0)


@pytest.fixture
def guards_off(unguarded):
    """The diagnostic switches of a negative control (tests/conftest.py)."""
    yield
