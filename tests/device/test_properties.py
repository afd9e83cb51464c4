"""Property-based tests: random short programs over random tensor placements.

A program starts from three tensors, each on a random flagos device (0..3),
with a random current device, and applies a few ops drawn from the registry's
generated binary and unary ops (a new op of those shapes joins the pool by
itself). Every step either computes what the same step computes on the CPU,
on its operands' device, or, when its operands sit on two devices, raises
PyTorch's same-device error naming both; the current device never changes
and the simulator rejects no launch.
"""

from __future__ import annotations

import warnings

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .cases import registry_ops  # noqa: E402

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 4, reason="needs four flagos devices")


@pytest.fixture(autouse=True)
def no_executor_cache():
    """Nothing here is about the executor cache: keep this module's executors out of
    the main thread's cache (tests/conftest.py-level fixtures switch it back on)."""
    torch_fl._C._set_executor_cache(False)
    yield
    torch_fl._C._set_executor_cache(True)

DEVICES = range(4)
SHAPES = [(2, 3), (3,), ()]  # broadcasting between them; () is a 0-dim tensor


def _float_to_float(spec) -> bool:
    """Ops that map float32 operands of every shape (and broadcast pair) of SHAPES to a
    float32 result: programs chain them."""
    tensors = [torch.linspace(-2, 2, 6).reshape(2, 3), torch.linspace(-1, 1, 3), torch.tensor(0.5)]
    assert [tuple(t.shape) for t in tensors] == SHAPES
    calls = [(x,) for x in tensors] if spec.shape == "unary" else [(x, y) for x in tensors for y in tensors]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return all(spec.overload(*args).dtype == torch.float32 for args in calls)
    except Exception:  # noqa: BLE001
        return False


UNARY = [s for s in registry_ops() if s.kind == "generated" and s.shape == "unary" and _float_to_float(s)]
BINARY = [s for s in registry_ops() if s.kind == "generated" and s.shape == "binary" and _float_to_float(s)]


@st.composite
def programs(draw):
    placements = draw(st.lists(st.sampled_from(DEVICES), min_size=3, max_size=3))
    # Mostly one device, so that most programs run to the end.
    if draw(st.booleans()):
        placements = [placements[0]] * 3
    shapes = draw(st.lists(st.sampled_from(SHAPES), min_size=3, max_size=3))
    current = draw(st.sampled_from(DEVICES))
    pool = [("u", s.op) for s in UNARY] + [("b", s.op) for s in BINARY]
    steps = draw(st.lists(st.tuples(st.sampled_from(pool), st.integers(0, 7), st.integers(0, 7)),
                          min_size=1, max_size=5))
    seed = draw(st.integers(0, 2**16))
    return placements, shapes, current, steps, seed


OVERLOADS = {s.op: s.overload for s in UNARY + BINARY}


def run_program(placements, shapes, current, steps, seed):
    gen = torch.Generator().manual_seed(seed)
    cpu = [torch.empty(shape).uniform_(-2, 2, generator=gen) for shape in shapes]
    dev = [t.to(f"flagos:{d}") for t, d in zip(cpu, placements)]
    where = list(placements)
    torch.flagos.set_device(current)
    torch_fl.sim.reset_stats()
    for (kind, op), a, b in steps:
        a, b = a % len(cpu), b % len(cpu)
        fn = OVERLOADS[op]
        if kind == "u":
            cpu.append(fn(cpu[a]))
            dev.append(fn(dev[a]))
            where.append(where[a])
        elif where[a] != where[b]:
            with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device") as info:
                fn(dev[a], dev[b])
            message = str(info.value)
            assert f"flagos:{where[a]}" in message and f"flagos:{where[b]}" in message, message
            break
        else:
            cpu.append(fn(cpu[a], cpu[b]))
            dev.append(fn(dev[a], dev[b]))
            where.append(where[a])
        assert dev[-1].device == torch.device("flagos", where[-1])
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == current
    assert stats["rejected_launches"] == 0 and stats["mismatched_launches"] == 0, stats
    for d in DEVICES:
        if d not in where:
            assert stats["launches"][d] == 0, f"a launch on flagos:{d}, which holds no tensor"
    for expected, actual in zip(cpu, dev):
        torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-5, equal_nan=True)


def test_pool_is_not_empty():
    assert len(UNARY) >= 3 and len(BINARY) >= 3, (UNARY, BINARY)


@settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(programs())
def test_random_programs_match_cpu(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_program(*program)
