"""The waits the backend inserts between asynchronous streams, and their negative controls.

Simulated streams run their work on worker threads, after the call that queued it has returned
(docs/streams.md). Every wait the backend inserts (csrc/runtime/stream.h, StreamWait) has one
scenario here: with the wait on, the scenario computes the right values and the simulator's
happens-before tracker sees no unordered access; with that one wait switched off
(torch_fl._C._set_stream_waits_enabled(False, kind)), the same scenario sees wrong values
(lazy streams: queued work runs only when something waits for it, so a missing wait shows
deterministically) or a reported hazard (decided from the order of runtime calls, so the same
on every run). test_every_wait_has_a_negative_control keeps the list complete.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_fl  # noqa: F401
from torch_fl import _C, sim

N = 1 << 14
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fresh_device_memory() -> None:
    # A block from the pool may still hold the expected values from an earlier
    # run: scenarios start with an empty pool so that a read that does not wait
    # sees fresh memory instead.
    torch.flagos.synchronize(0)
    torch.flagos.synchronize(1)
    torch.flagos.empty_cache()


def host_read() -> bool:
    """.cpu() of a kernel's output: the host waits for the device's stream before aclrtMemcpy."""
    x = torch.full((N,), 1.5, device="flagos")
    y = x * 3
    return bool((y.cpu() == 4.5).all())


def host_read_item() -> bool:
    """.item() (aten::_local_scalar_dense): the same wait as host_read."""
    x = torch.full((N,), 1.5, device="flagos")
    return (x * 3).sum().item() == 4.5 * N


def host_write() -> bool:
    """A blocking CPU -> flagos copy into a tensor a queued kernel still reads: the host waits
    for the destination's stream before aclrtMemcpy writes."""
    x = torch.full((N,), 1.5, device="flagos")
    y = x * 3
    x.copy_(torch.full((N,), 5.0))
    return bool((y.cpu() == 4.5).all()) and bool((x.cpu() == 5).all())


def peer_source() -> bool:
    """flagos:0 -> flagos:1: the copy, queued on device 1's stream, waits for device 0's stream."""
    x = torch.full((N,), 1.5, device="flagos:0") * 3
    y = x.to("flagos:1")
    return bool((y.cpu() == 4.5).all())


def peer_release() -> bool:
    """After flagos:0 -> flagos:1, device 0's stream waits for the copy before its next work
    (here a write to the source) runs."""
    x = torch.full((N,), 1.5, device="flagos:0") * 3
    y = x.to("flagos:1")
    x.fill_(5)
    torch.flagos.synchronize(0)  # lazy streams: device 0's work runs first
    return bool((y.cpu() == 4.5).all())


def block_reuse() -> bool:
    """A block another stream used (Tensor.record_stream) is not handed out again before that
    stream's work has run."""
    side = torch.flagos.Stream()
    x = torch.full((N,), 1.5, device="flagos")
    side.wait_stream(torch.flagos.current_stream())
    with torch.flagos.stream(side):
        y = x * 2
    x.record_stream(side)
    del x
    z = torch.empty(N, device="flagos").fill_(7)  # the same size, on the default stream
    # The default stream first: on lazy streams a reused block is then filled before
    # the side stream reads it (a device-wide synchronize drains in no fixed order).
    torch.flagos.current_stream().synchronize()
    side.synchronize()
    return bool((y.cpu() == 3).all()) and bool((z.cpu() == 7).all())


def pinned_reuse() -> bool:
    """A pinned block a non-blocking copy reads is not handed out again before the copy has run."""
    _C._host_empty_cache()
    p = torch.full((N,), 1.5).pin_memory()
    y = p.to("flagos", non_blocking=True)
    del p
    q = torch.empty(N, pin_memory=True)  # the same size
    q.fill_(7)
    return bool((y.cpu() == 1.5).all())


def release() -> bool:
    """empty_cache returns memory to the runtime (aclrtFree, which does not wait) only after the
    streams that used it are done."""
    x = torch.full((N,), 1.5, device="flagos")
    y = x * 3
    del x
    torch.flagos.empty_cache()
    return bool((y.cpu() == 4.5).all())


# kind -> (scenario, what removing the wait shows: in lazy mode, in async mode).
# "values": wrong values; "hazard": a reported unordered access; None: nothing certain.
SCENARIOS = {
    "host_read": (host_read, {"lazy": {"values", "hazard"}, "async": {"hazard"}}),
    "host_write": (host_write, {"lazy": {"values", "hazard"}, "async": {"hazard"}}),
    "peer_source": (peer_source, {"lazy": {"values", "hazard"}, "async": {"hazard"}}),
    "peer_release": (peer_release, {"lazy": {"values", "hazard"}, "async": {"hazard"}}),
    "block_reuse": (block_reuse, {"lazy": {"values", "hazard"}, "async": {"hazard"}}),
    # The host writes the reused pinned block with a CPU kernel, which no runtime call sees.
    "pinned_reuse": (pinned_reuse, {"lazy": {"values"}, "async": set()}),
    "release": (release, {"lazy": {"hazard"}, "async": {"hazard"}}),
}
EXTRA = {"host_read": [host_read_item]}  # more scenarios of a kind, same expectations


def _cases():
    for kind, (scenario, _) in SCENARIOS.items():
        for fn in [scenario, *EXTRA.get(kind, [])]:
            yield pytest.param(kind, fn, id=fn.__name__)


def _run(fn, mode: str):
    sim.set_stream_mode(mode)
    _fresh_device_memory()
    sim.reset_stats()
    ok = fn()
    torch.flagos.synchronize(0)
    torch.flagos.synchronize(1)
    return ok, sim.hazard_report()


def test_every_wait_has_a_negative_control():
    assert sorted(_C._stream_wait_kinds()) == sorted(SCENARIOS)


@pytest.mark.parametrize("mode", ["async", "lazy"])
@pytest.mark.parametrize("kind,fn", list(_cases()))
def test_wait_orders_the_scenario(kind, fn, mode):
    ok, report = _run(fn, mode)
    assert ok, f"{fn.__name__} computed wrong values with every wait on ({mode} streams)"
    assert not report  # the autouse fixture checks it too


@pytest.mark.parametrize("mode", ["async", "lazy"])
@pytest.mark.parametrize("kind,fn", list(_cases()))
def test_negative_control_without_the_wait(kind, fn, mode, hazards):
    expected = SCENARIOS[kind][1][mode]
    if not expected:
        pytest.skip(f"removing {kind} shows nothing certain with {mode} streams (the lazy case is the control)")
    _C._set_stream_waits_enabled(False, kind)
    try:
        ok, report = _run(fn, mode)
    finally:
        _C._set_stream_waits_enabled(True)
    seen = set()
    if not ok:
        seen.add("values")
    if report:
        seen.add("hazard")
    assert expected <= seen, (f"without the {kind} wait, {fn.__name__} ({mode} streams) should show {sorted(expected)}"
                              f", showed {sorted(seen)}; hazards: {report}")


def test_only_the_switched_wait_is_off():
    _C._set_stream_waits_enabled(False, "peer_source")
    try:
        assert not _C._stream_waits_enabled("peer_source")
        assert all(_C._stream_waits_enabled(k) for k in _C._stream_wait_kinds() if k != "peer_source")
    finally:
        _C._set_stream_waits_enabled(True)
    with pytest.raises(ValueError, match="unknown stream wait 'nope'"):
        _C._set_stream_waits_enabled(False, "nope")


def _run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    program = "import torch\nimport torch_fl\nfrom torch_fl import _C, sim\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, **env})


RELEASE_WITHOUT_CACHE = """
    sim.set_stream_mode("lazy")
    {switch}
    x = torch.full((1 << 14,), 1.5, device="flagos")
    y = x * 3
    del x  # FLAGOS_ALLOC_CACHE=0: aclrtFree at once
    ok = bool((y.cpu() == 4.5).all())
    torch.flagos.synchronize()
    print("ok" if ok else "wrong", len(sim.hazard_report()))
"""


@pytest.mark.parametrize("wait", [True, False], ids=["wait", "negative_control"])
def test_release_without_the_cache_waits_for_the_stream(wait):
    """FLAGOS_ALLOC_CACHE=0 frees every block at once: aclrtFree must come after the stream's work
    (kRelease), else the simulator reports the free as a hazard."""
    switch = "" if wait else "_C._set_stream_waits_enabled(False, 'release')"
    result = _run_python(RELEASE_WITHOUT_CACHE.format(switch=switch), {"FLAGOS_ALLOC_CACHE": "0"})
    assert result.returncode == 0, result.stderr[-3000:]
    values, count = result.stdout.split()
    assert values == "ok"
    assert (int(count) == 0) == wait, result.stdout
