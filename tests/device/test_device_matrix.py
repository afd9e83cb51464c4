"""The device matrix: every op of the registry (generated and handwritten), with its
tensors on device K while device J is current, and on the current device.

The op list and the samples come from tests/device/cases.py (registry +
OpInfo + schema), so a new op is covered without writing a test. For each
(op, sample, placement) the test asserts:

- the values equal the same call on CPU tensors (results and every argument
  after the call: in-place, out= and untouched inputs);
- every output lives on flagos:K;
- device J is still current;
- the simulator counted launches on K only, none rejected or mismatched, and
  (for a non-empty sample) one of the op's ACLNN operators ran, not the CPU
  fallback for this op;
- a same-device call (J == K) made no aclrtSetDevice call.

The negative control runs the first sample of every guarded op again with the
injected guard and the sanitizer switched off: the simulator must then
reject the launch (or the values must be wrong). An op that still passes has
a test that proves nothing; the suite fails listing it, unless it is in
NOT_CAUGHT with a reason.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

from .cases import Case, registry_ops, cases_for, tensors_in  # noqa: E402

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 3, reason="needs three flagos devices")

K = 2  # where the tensors live
PLACEMENTS = {"other-device": (0, K), "same-device": (K, K)}  # name -> (current J, tensors' device K)

# Ops whose test passes with the guards off, with the reason that is not a hole:
# every launch of theirs is guarded by something other than the injected guard.
# (tril_indices and triu_indices were listed while their kernels made the device current with a
# c10 device guard that the switch does not turn off; their generated wrappers now use the
# injected guard, and the control catches them.)
NOT_CAUGHT: dict[str, str] = {}

# Samples on which an op is known to differ from the CPU, with the reason: expected
# to fail (strict: the test reports the fix). (op, case id) -> reason.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

# Outputs that live on the host by design, as on CUDA: op -> (output positions, reason).
HOST_OUTPUTS: dict[str, tuple[set[int], str]] = {
    "_scaled_dot_product_fused_attention_overrideable": (
        {6, 7}, "the philox seed and offset: without dropout, 0-dim int64 host zeros, as CUDA's fused "
                "attention returns them (the meta function promises tensors, on no device)"),
}

OPS = registry_ops()
CASES = {spec.op: cases_for(spec.op) for spec in OPS}
PARAMS = [
    pytest.param(case, placement, id=f"{spec.op}-{case.id}-{placement}",
                 marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[spec.op, case.id])]
                 if (spec.op, case.id) in KNOWN_FAILURES else [])
    for spec in OPS
    for case in CASES[spec.op]
    for placement in PLACEMENTS
    # Independent of the registry's policy: an op whose arguments name a device runs on that
    # device, so a wrong `none` (or a wrong explicit-arg) fails the op's own other-device test.
    if spec.names_a_device or placement == "same-device"
]


@pytest.fixture(scope="module")
def worker():
    """One thread runs every device call of this module. The executor cache is per
    thread and dies with it, so the thousands of executors made here do not fill
    the main thread's cache for the test modules that run later."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="device-matrix")
    yield pool
    pool.shutdown(wait=True)


def to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (list, tuple)):
        return type(value)(to_cpu(v) for v in value)
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    return value


def assert_same_values(actual, expected, what: str):
    torch.testing.assert_close(to_cpu(actual), expected, rtol=1e-4, atol=1e-5, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


def run_on(case: Case, current: int, device: int):
    """The call alone, with the counters reset and read right around it."""
    args, kwargs = case.place(f"flagos:{device}")
    torch.flagos.set_device(current)
    torch_fl.sim.reset_stats()
    result = case.call(args, kwargs, f"flagos:{device}")
    stats = torch_fl.sim.stats()
    return result, (args, kwargs), stats, torch.flagos.current_device()


def test_known_failures_name_existing_cases():
    ids = {(spec.op, case.id) for spec in OPS for case in CASES[spec.op]}
    stale = sorted(set(KNOWN_FAILURES) - ids)
    assert not stale, f"KNOWN_FAILURES names cases that no longer exist (remove them): {stale}"


def test_placements_do_not_read_the_policy():
    """Every op of the registry names a device through an argument, so every op is run on a
    non-current device: a policy flipped to `none` would be launched on the current device and fail."""
    assert all(spec.names_a_device for spec in OPS), [spec.op for spec in OPS if not spec.names_a_device]
    assert all(any(p.values[1] == "other-device" for p in PARAMS if p.values[0].spec is spec) for spec in OPS)


def test_every_op_has_samples():
    missing = [f"{spec.op} ({spec.where})" for spec in OPS if not CASES[spec.op]]
    assert not missing, ("no sample inputs for these ops (no OpInfo sample reaches them and the schema "
                         "gives none): add them to SPECIAL in tests/device/cases.py: " + ", ".join(missing))
    assert all(any(not c.empty for c in CASES[spec.op]) for spec in OPS)


@pytest.mark.parametrize("case,placement", PARAMS)
def test_op_on_device(case: Case, placement: str, worker):
    worker.submit(check_op_on_device, case, placement).result()


def check_op_on_device(case: Case, placement: str):
    spec = case.spec
    # The op's own kernel: without it a composite (with PyTorch's own device guard) or
    # another overload sharing its ACLNN operator could pass this test in its place.
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{spec.op}", "PrivateUse1"), \
        f"{spec.op} has no flagos kernel registered (is the build current?)"
    current, device = PLACEMENTS[placement]
    expected, expected_args = case.run("cpu")

    result, args, stats, current_after = run_on(case, current, device)

    assert current_after == current, f"{spec.op} left flagos:{current_after} current"
    assert stats["rejected_launches"] == 0 and stats["mismatched_launches"] == 0, stats
    others = {d: n for d, n in stats["launches"].items() if d != device and n}
    assert not others, f"{spec.op} launched on {others}, its tensors are on flagos:{device}"
    assert f"aten::{spec.op}" not in stats["fallback_ops"], f"{spec.op} ran on the CPU fallback"
    if not case.empty:
        assert stats["launches"][device] >= 1, f"{spec.op} launched nothing"
        if spec.kind == "generated":  # a handwritten kernel may also launch through other ops
            ran = set(stats["op_launches"]) & spec.kernels
            assert ran, f"none of {sorted(spec.kernels)} ran; launched {stats['op_launches']}"
    if current == device:
        assert stats["set_device_calls"] == 0, f"same-device {spec.op} called aclrtSetDevice"
    host_positions = HOST_OUTPUTS.get(spec.op, (set(), ""))[0]
    for position, output in enumerate(result if host_positions else [result]):
        want = torch.device("cpu") if position in host_positions else torch.device("flagos", device)
        for t in tensors_in(output):
            assert t.device == want, f"an output of {spec.op} is on {t.device}"
    if case.check is not None:
        assert case.check(to_cpu(result)), f"{spec.op} result fails its check: {to_cpu(result)}"
        return
    assert_same_values(result, expected, f"{spec.op} result")
    assert_same_values(tensors_in(args), tensors_in(expected_args), f"{spec.op} arguments after the call")


# ---- negative control -------------------------------------------------------------


def _control_case(spec) -> Case | None:
    for case in CASES[spec.op]:
        if not case.empty and case.layout == "contiguous":
            return case
    return None


class BrokenOp(Exception):
    """The op fails for a reason unrelated to devices (its matrix test fails too)."""


def guards_off_outcome(case: Case, current: int = 0, device: int = K) -> str | None:
    """How the case fails with the guards and the sanitizer off; None if it does not."""
    expected, expected_args = case.run("cpu")
    args, kwargs = case.place(f"flagos:{device}")
    torch.flagos.set_device(current)
    torch_fl.sim.reset_stats()
    torch_fl._C._set_guards_enabled(False)
    torch_fl._C._set_device_check(False)
    try:
        result = case.call(args, kwargs, f"flagos:{device}")
    except RuntimeError as error:
        stats = torch_fl.sim.stats()
        if stats["rejected_launches"] or "device" in str(error):
            return f"rejected: {str(error).splitlines()[0][:120]}"
        raise BrokenOp(str(error).splitlines()[0][:200]) from error
    finally:
        torch_fl._C._set_guards_enabled(True)
        torch_fl._C._set_device_check(True)
        torch.flagos.set_device(current)
    stats = torch_fl.sim.stats()
    if stats["rejected_launches"] or stats["mismatched_launches"]:
        return f"rejected {stats['rejected_launches']} launch(es) without raising"
    try:
        if case.check is not None:
            assert case.check(to_cpu(result))
        else:
            assert_same_values(result, expected, "result")
            assert_same_values(tensors_in((args, kwargs)), tensors_in(expected_args), "arguments")
    except AssertionError:
        return "wrong values"
    return None


# Every op whose arguments name a device, whatever policy the registry declares.
GUARDED = [spec for spec in OPS if spec.names_a_device]


def test_negative_control_catches_every_guarded_op(guards_off, capsys, worker):
    worker.submit(check_negative_control, capsys).result()


def check_negative_control(capsys):
    caught, not_caught, no_case, broken = {}, {}, [], {}
    for spec in GUARDED:
        case = _control_case(spec)
        if case is None:
            no_case.append(spec.op)
            continue
        try:
            outcome = guards_off_outcome(case)
        except BrokenOp as error:  # not judged here: test_op_on_device reports it
            broken[spec.op] = str(error)
            continue
        (caught if outcome else not_caught)[spec.op] = outcome or case.id
    holes = sorted(set(not_caught) - set(NOT_CAUGHT))
    stale = sorted(set(NOT_CAUGHT) & set(caught))
    with capsys.disabled():
        print(f"\nnegative control: {len(caught)} of {len(GUARDED)} guarded ops caught; "
              f"not caught: {sorted(not_caught) or 'none'}; failing for other reasons: {sorted(broken) or 'none'}")
    assert not no_case, f"no non-empty sample for the negative control of: {no_case}"
    assert not holes, ("these ops still pass with the guards off, so their device tests prove nothing "
                       f"(add a sample that launches, or list them in NOT_CAUGHT with a reason): {holes}")
    assert not stale, f"NOT_CAUGHT lists ops that the negative control does catch: {stale}"


@pytest.mark.parametrize("spec", [s for s in GUARDED if s.op in ("add.Tensor", "mm", "fill_.Scalar", "cat")],
                         ids=lambda s: s.op)
def test_negative_control_also_fails_in_nan_mode(spec, guards_off, worker):
    """In nan mode (the 910C's behaviour) the same launch "succeeds" with wrong values."""
    worker.submit(check_nan_mode, spec).result()


def check_nan_mode(spec):
    case = _control_case(spec)
    torch_fl.sim.set_mismatch_mode("nan")
    outcome = guards_off_outcome(case)
    assert outcome is not None and torch_fl.sim.stats()["mismatched_launches"] >= 1, outcome


# ---- set-device calls on a cold allocator -------------------------------------------


def set_device_calls(case: Case, cold: bool) -> int:
    args, kwargs = case.place(f"flagos:{K}")
    torch.flagos.set_device(0)
    torch.flagos.synchronize(K)
    if cold:
        torch_fl.flagos.empty_cache()  # the inputs stay; every output is a fresh runtime allocation
    torch_fl.sim.reset_stats()
    case.call(args, kwargs, f"flagos:{K}")
    assert torch.flagos.current_device() == 0
    return torch_fl.sim.stats()["set_device_calls"]


def check_set_device_calls_cold_and_warm(case: Case):
    """The launch device is made current before any output is allocated: with nothing
    cached, the allocator's runtime allocation finds it current, so a call makes the same
    set-device calls cold as warm, and a kernel makes two (the switch and the restore)."""
    spec = case.spec
    set_device_calls(case, cold=False)  # once first: one-time work (autograd's device threads) is not counted
    cold = set_device_calls(case, cold=True)
    warm = set_device_calls(case, cold=False)
    assert cold == warm, f"{spec.op}: {cold} set-device calls on a cold allocator, {warm} on a warm one"
    expected = SEVERAL_KERNELS.get((spec.op, case.id), (2, ""))[0]
    assert warm == expected, f"{spec.op}: {warm} set-device calls, not {expected}"


# Cases whose call runs several kernels, each with its own guard (a composite
# that ATen or the test's OpInfo runs around the op): (op, case) -> (calls, what).
SEVERAL_KERNELS: dict[tuple[str, str], tuple[int, str]] = {
    ("zero_", "opinfo:zero_#1"): (4, "the OpInfo's in-place variant clones self first: clone, then zero_"),
    ("_scaled_dot_product_fused_attention_overrideable_backward", "plain"):
        (8, "the case runs SDPA forward and backward under autograd: the forward, out * out, sum, "
            "autograd's ones_like seed, then the backward"),
}

COLD_PARAMS = [pytest.param(case, id=f"{spec.op}-{case.id}") for spec in OPS for case in CASES[spec.op][:1]
               if not case.empty]


@pytest.mark.parametrize("case", COLD_PARAMS)
def test_set_device_calls_cold_and_warm(case: Case, worker):
    worker.submit(check_set_device_calls_cold_and_warm, case).result()
