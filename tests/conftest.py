"""Shared test setup: the launch-time device sanitizer is on for every test,
and each test starts on device 0 with zeroed simulator counters, async
streams and every stream wait of the backend on. Every test must end
without a hazard (an access to device memory that no wait orders, as the
simulator's happens-before tracker sees it), unless it asks for the
`hazards` fixture (negative controls), and without failed work left on a
stream that no synchronization has reported."""

import os

os.environ.setdefault("FLAGOS_DEVICE_CHECK", "1")

import pytest  # noqa: E402

try:
    import torch  # noqa: E402

    import torch_fl  # noqa: E402
except ImportError:  # the backend is not built: only generator/simulator tests run
    torch_fl = None


@pytest.fixture(autouse=True)
def _clean_flagos_state(request):
    if torch_fl is None:
        yield
        return
    torch.flagos.set_device(0)
    torch_fl.sim.set_mismatch_mode("error")
    torch_fl.sim.clear_faults()
    torch_fl._C._set_guards_enabled(True)
    torch_fl._C._set_stream_waits_enabled(True)
    torch_fl.sim.set_stream_mode("async")
    torch_fl.sim.drain_streams()
    torch_fl.sim.reset_stats()
    yield
    torch_fl._C._set_guards_enabled(True)
    torch_fl._C._set_stream_waits_enabled(True)
    torch_fl.sim.set_stream_mode("async")
    torch_fl.sim.set_mismatch_mode("error")
    torch_fl.sim.clear_faults()
    # A kernel that fails when it runs is reported by the next synchronization
    # (asynchronous streams): report it here, against the test that queued it,
    # not in whichever test synchronizes next.
    failed = []
    for device in range(torch_fl.flagos.device_count()):
        try:
            torch_fl.flagos.synchronize(device)
        except RuntimeError as error:
            failed.append(f"flagos:{device}: {error}")
    assert not failed, "the test left failed work on a stream, unreported:\n" + "\n".join(failed)
    if "hazards" not in request.fixturenames:
        report = torch_fl.sim.hazard_report()
        assert not report, "the test left unordered accesses to device memory:\n" + "\n".join(report)


@pytest.fixture
def hazards():
    """For negative controls, which provoke hazards: the autouse check is off. Yields a function
    that returns the hazard reports since the test started (or the last call with reset=True)."""
    def seen(reset: bool = False) -> list:
        report = torch_fl.sim.hazard_report()
        if reset:
            torch_fl.sim.drain_streams()
            torch_fl.sim.reset_stats()
        return report
    yield seen
    torch_fl.sim.drain_streams()


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
