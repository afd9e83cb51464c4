"""Shared test setup: the launch-time device sanitizer is on for every test,
and each test starts on device 0 with zeroed simulator counters."""

import os

os.environ.setdefault("FLAGOS_DEVICE_CHECK", "1")

import pytest  # noqa: E402

try:
    import torch  # noqa: E402

    import torch_fl  # noqa: E402
except ImportError:  # the backend is not built: only generator/simulator tests run
    torch_fl = None


@pytest.fixture(autouse=True)
def _clean_flagos_state():
    if torch_fl is None:
        yield
        return
    torch.flagos.set_device(0)
    torch_fl.sim.set_mismatch_mode("error")
    torch_fl.sim.clear_faults()
    torch_fl._C._set_guards_enabled(True)
    torch_fl.sim.reset_stats()
    yield
    torch_fl._C._set_guards_enabled(True)
    torch_fl.sim.set_mismatch_mode("error")
    torch_fl.sim.clear_faults()


@pytest.fixture
def unguarded():
    """Negative control: the injected guards and the launch-time sanitizer off,
    so that kernels launch on the ambient device and the simulator alone
    judges each launch. Both switches are restored."""
    torch_fl._C._set_guards_enabled(False)
    torch_fl._C._set_device_check(False)
    try:
        yield
    finally:
        torch_fl._C._set_guards_enabled(True)
        torch_fl._C._set_device_check(True)


def requires_backend():
    return pytest.mark.skipif(torch_fl is None, reason="torch_fl is not built")
