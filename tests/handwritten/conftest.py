"""Fixtures of the handwritten-kernel tests (tests/conftest.py already starts
each test on flagos:0 with zeroed counters and the sanitizer on)."""

import pytest

torch_fl = pytest.importorskip("torch_fl")


@pytest.fixture
def unguarded():
    """Negative control: guards and the launch-time sanitizer off, so that a
    kernel launches on the ambient current device and the simulator's own
    launch validation judges it. Both switches are restored."""
    torch_fl._C._set_guards_enabled(False)
    torch_fl._C._set_device_check(False)
    try:
        yield
    finally:
        torch_fl._C._set_guards_enabled(True)
        torch_fl._C._set_device_check(True)
