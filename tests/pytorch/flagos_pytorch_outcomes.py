"""pytest plugin of the device-generic runner (run_device_generic.py).

Loaded with `-p flagos_pytorch_outcomes` in each pytest subprocess the runner
starts. It
- imports torch_fl first when FLAGOS_PT_DEVICE=flagos, so that PyTorch's
  torch.testing._internal modules see the PrivateUse1 backend when they are
  imported (common_device_type picks its device bases, and common_utils its
  NATIVE_DEVICES, at import time);
- appends one JSON line per test to FLAGOS_PT_OUTCOMES as soon as the test
  starts and when it ends, flushed, so that a process that dies mid-test
  still tells the runner which test killed it;
- deselects the node ids listed in FLAGOS_PT_DONE (the tests a previous,
  crashed process already ran), so the runner can resume after a crash;
- records, with each test, the name of the test function it was made from
  ("func": test_out for TestCommonCPU::test_out_add_cpu_float32; PyTorch's
  device-generic instantiation keeps the template's __name__), so the
  runner can report per test function; and, on flagos, which torch_fl the
  process imported (a "session" line), so a run against another build
  (PYTHONPATH) shows what it measured;
- on flagos, records with each test's outcome how many kernels it launched
  on flagos devices ("launches", from torch_fl.sim.stats()), so a runner can
  tell the tests that touched the device from those that never did (a test
  that builds its model on the CPU whatever the test device passes anyway);
- on flagos, synchronizes every device at the end of each test's call: a
  kernel that fails at run time reports at the next synchronize (as on
  CUDA), so without this its error would surface in whichever later test
  synchronizes first. A test that passed but left such an error fails with
  it; a test that failed anyway keeps its own error.
"""

import json
import os

if os.environ.get("FLAGOS_PT_DEVICE") == "flagos":
    import torch  # noqa: F401

    import torch_fl  # noqa: F401

_out = None
_FUNCS = {}  # nodeid -> name of the test function (template) it was made from


def _write(record):
    global _out
    if _out is None:
        _out = open(os.environ["FLAGOS_PT_OUTCOMES"], "a", buffering=1)
    _out.write(json.dumps(record) + "\n")
    _out.flush()


def pytest_sessionstart(session):
    if os.environ.get("FLAGOS_PT_DEVICE") == "flagos":
        _write({"event": "session", "torch_fl": os.path.dirname(os.path.abspath(torch_fl.__file__))})


def _func_name(item):
    name = getattr(getattr(item, "obj", None), "__name__", None)
    return name if isinstance(name, str) else item.name.split("[")[0]


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        _FUNCS[item.nodeid] = _func_name(item)
    path = os.environ.get("FLAGOS_PT_DONE")
    if not path or not os.path.exists(path):
        return
    with open(path) as f:
        done = {line.strip() for line in f if line.strip()}
    keep, drop = [], []
    for item in items:
        (drop if item.nodeid in done else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


_LAUNCHES_AT_START = {}  # nodeid -> flagos kernel launches so far, when the test started


def _launches():
    from torch_fl import sim

    return sum(sim.stats()["launches"].values())


def pytest_runtest_logstart(nodeid, location):
    if os.environ.get("FLAGOS_PT_DEVICE") == "flagos":
        _LAUNCHES_AT_START[nodeid] = _launches()
    _write({"event": "start", "nodeid": nodeid, "func": _FUNCS.get(nodeid)})


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    if isinstance(report.longrepr, tuple):  # skips: (path, line, reason)
        return str(report.longrepr[2])
    return str(report.longrepr)


def _describe(exc):
    first = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {first[0] if first else ''}"


def _root_cause(exc):
    """The innermost exception of a chain: assertEqual's "Comparing ... resulted
    in the unexpected exception above" hides the error of the op under test."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    return _describe(exc)


def _unwrapped(exc):
    """The test's own exception when PyTorch's OpInfo tests re-raised it as
    Exception("...\n\nCaused by sample input at index N: ...") (their sample
    tracking; the re-raised one carries _tracked_input), else None."""
    if getattr(exc, "_tracked_input", None) is not None and exc.__cause__ is not None:
        return _describe(exc.__cause__)
    return None


import pytest  # noqa: E402

_ON_FLAGOS = os.environ.get("FLAGOS_PT_DEVICE") == "flagos"


def _synchronize_flagos():
    import torch

    for index in range(torch.flagos.device_count()):
        torch.flagos.synchronize(index)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not _ON_FLAGOS:
        return (yield)
    try:
        result = yield
    except BaseException:
        try:
            _synchronize_flagos()
        except Exception:  # noqa: BLE001 - the test's own failure is the one reported
            pass
        raise
    _synchronize_flagos()
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.failed:
        try:
            report.flagos_root = _root_cause(call.excinfo.value)[:2000]
            unwrapped = _unwrapped(call.excinfo.value)
            if unwrapped:
                report.flagos_unwrapped = unwrapped[:2000]
        except Exception:  # noqa: BLE001 - a report must never fail
            pass


def pytest_runtest_logreport(report):
    # One outcome per test: the first failing phase, else the call phase
    # (a skip raised in setup has no call phase).
    if report.when == "call" or report.failed or (report.when == "setup" and report.skipped):
        outcome = report.outcome
        if report.failed and report.when != "call":
            outcome = "error"
        record = {"event": "end", "nodeid": report.nodeid, "outcome": outcome,
                  "when": report.when, "duration": round(report.duration, 3),
                  "func": _FUNCS.get(report.nodeid)}
        if report.nodeid in _LAUNCHES_AT_START:
            record["launches"] = _launches() - _LAUNCHES_AT_START[report.nodeid]
        if report.failed or report.skipped:
            record["message"] = _message(report)[:2000]
            root = getattr(report, "flagos_root", None)
            if root:
                record["root"] = root
            unwrapped = getattr(report, "flagos_unwrapped", None)
            if unwrapped:
                record["unwrapped"] = unwrapped
        _write(record)
