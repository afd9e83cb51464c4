"""The mixed-device audit (docs/mixed-device.md): what each op does when its
arguments are not all on one flagos device.

Every row of MIXED either gives the right result (the same values as on the
CPU, on the expected device, no rejected launch, the current device
unchanged) or raises the documented error naming the devices. The table in
docs/mixed-device.md is checked against MIXED row by row, so the document
and the tests cannot drift apart.

Two registry-driven tests complete it: every same-device op with two tensor
arguments rejects them on two flagos devices, and every op accepts (or, as
listed, rejects) a CPU 0-dim tensor in place of a later tensor argument.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from typing import Callable

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

from .cases import REPO, Cpu, Out, cases_for, place, registry_ops, tensors_in  # noqa: E402

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 3, reason="needs three flagos devices")


@pytest.fixture(autouse=True)
def no_executor_cache():
    """Nothing here is about the executor cache: keep this module's executors out of
    the main thread's cache (tests/conftest.py-level fixtures switch it back on)."""
    torch_fl._C._set_executor_cache(False)
    yield
    torch_fl._C._set_executor_cache(True)

CURRENT = 0
ROLES = {"K": "flagos:2", "J": "flagos:1", "cpu": "cpu"}  # K: the op's device, J: another one
SAME_DEVICE = "Expected all tensors to be on the same device"


def a(shape=(2, 3), dtype=torch.float32, seed=0):
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed))).to(dtype)


IDX = torch.tensor([2, 0])


@dataclass(frozen=True)
class Mixed:
    id: str  # the row's name in docs/mixed-device.md
    call: Callable  # call(d): d(role, tensor) places a tensor on the role's device
    outcome: str  # "ok K" / "ok J" / "ok cpu": right result on that device; "error": raises
    error: str = SAME_DEVICE  # the message of an error row
    names: tuple = ("K", "J")  # the devices an error names


MIXED = [
    # copy_ and to(): every direction
    Mixed("copy_ cpu->K", lambda d: d("K", a()).copy_(d("cpu", a(seed=1))), "ok K"),
    Mixed("copy_ K->cpu", lambda d: d("cpu", a()).copy_(d("K", a(seed=1))), "ok cpu"),
    Mixed("copy_ K->K", lambda d: d("K", a()).copy_(d("K", a(seed=1))), "ok K"),
    Mixed("copy_ J->K", lambda d: d("K", a()).copy_(d("J", a(seed=1))), "ok K"),
    Mixed("copy_ J->K broadcast", lambda d: d("K", a()).copy_(d("J", a((3,), seed=1))), "ok K"),
    Mixed("copy_ J->K int64 to float", lambda d: d("K", a()).copy_(d("J", torch.arange(6).reshape(2, 3))), "ok K"),
    Mixed("copy_ J->K non-contiguous dst", lambda d: d("K", a((3, 2))).t().copy_(d("J", a(seed=1))), "ok K"),
    Mixed("copy_ cpu 0-dim->K", lambda d: d("K", a()).copy_(torch.tensor(3.0)), "ok K"),
    Mixed("to K->J", lambda d: d("K", a()).to(ROLES["J"] if d.device else "cpu"), "ok J"),
    Mixed("to K->J float64", lambda d: d("K", a()).to(ROLES["J"] if d.device else "cpu", torch.float64), "ok J"),
    Mixed("to K->cpu", lambda d: d("K", a()).to("cpu"), "ok cpu"),
    Mixed("to cpu->K", lambda d: a().to(ROLES["K"] if d.device else "cpu"), "ok K"),
    Mixed("to K->K copy", lambda d: d("K", a()).to(ROLES["K"] if d.device else "cpu", copy=True), "ok K"),
    # Python numbers and CPU 0-dim tensors as operands
    Mixed("x + 2.5", lambda d: d("K", a()) + 2.5, "ok K"),
    Mixed("2.5 - x", lambda d: 2.5 - d("K", a()), "ok K"),
    Mixed("x + cpu 0-dim", lambda d: d("K", a()) + torch.tensor(2.5), "ok K"),
    Mixed("cpu 0-dim + x", lambda d: torch.tensor(2.5) + d("K", a()), "ok K"),
    Mixed("x * cpu 0-dim int64", lambda d: d("K", a()) * torch.tensor(3), "ok K"),
    Mixed("x.add_(cpu 0-dim)", lambda d: d("K", a()).add_(torch.tensor(2.5)), "ok K"),
    Mixed("maximum(x, cpu 0-dim)", lambda d: torch.maximum(d("K", a()), torch.tensor(0.0)), "ok K"),
    Mixed("addmm(cpu 0-dim, m1, m2)", lambda d: torch.addmm(torch.tensor(1.5), d("K", a((2, 3))), d("K", a((3, 2)))),
          "ok K"),
    Mixed("x.fill_(cpu 0-dim)", lambda d: d("K", a()).fill_(torch.tensor(3.0)), "ok K"),
    Mixed("x.fill_(J 0-dim)", lambda d: d("K", a()).fill_(d("J", torch.tensor(3.0))), "ok K"),
    Mixed("x + cpu 1-dim", lambda d: d("K", a()) + d("cpu", a((3,))), "error", names=("K", "cpu")),
    Mixed("x + J 0-dim", lambda d: d("K", a()) + d("J", torch.tensor(2.5)), "error"),
    # indices on the CPU
    Mixed("x[cpu idx]", lambda d: d("K", a((3, 4)))[IDX], "ok K"),
    Mixed("x[J idx]", lambda d: d("K", a((3, 4)))[d("J", IDX)], "error",
          error="indices should be either on cpu or on the same device as the indexed tensor", names=("K",)),
    Mixed("index_put_ cpu idx", lambda d: d("K", a((3, 4))).index_put_((IDX,), d("K", torch.tensor(9.0))), "ok K"),
    Mixed("index_select(x, cpu idx)", lambda d: d("K", a((3, 4))).index_select(1, IDX), "ok K"),
    Mixed("index_select(x, J idx)", lambda d: d("K", a((3, 4))).index_select(1, d("J", IDX)), "error"),
    # gather is structured: its generated wrapper checks devices as CUDA does (a 0-dim CPU index only)
    Mixed("gather(x, cpu idx)", lambda d: d("K", a((3, 4))).gather(1, torch.tensor([[2, 0]] * 3)), "error",
          names=("K", "cpu")),
    Mixed("gather(x, J idx)", lambda d: d("K", a((3, 4))).gather(1, d("J", torch.tensor([[2, 0]] * 3))), "error"),
    Mixed("masked_select(x, cpu mask)", lambda d: d("K", a()).masked_select(torch.tensor([True, False, True])),
          "error", names=("K", "cpu")),
    Mixed("embedding(cpu idx, weight)", lambda d: torch.nn.functional.embedding(IDX, d("K", a((3, 4)))), "ok K"),
    # tensor lists
    Mixed("cat [K, K]", lambda d: torch.cat([d("K", a()), d("K", a(seed=1))]), "ok K"),
    Mixed("cat [K, J]", lambda d: torch.cat([d("K", a()), d("J", a(seed=1))]), "error"),
    Mixed("cat [K, cpu]", lambda d: torch.cat([d("K", a()), d("cpu", a(seed=1))]), "error", names=("K", "cpu")),
    Mixed("stack [K, J]", lambda d: torch.stack([d("K", a()), d("J", a(seed=1))]), "error"),
    Mixed("_foreach_add_([K, J], 1.5)", lambda d: torch._foreach_add_([d("K", a()), d("J", a(seed=1))], 1.5),
          "ok K"),
    Mixed("_foreach_mul_([K, J], 2.0)", lambda d: torch._foreach_mul_([d("K", a()), d("J", a(seed=1))], 2.0),
          "ok K"),
    Mixed("_foreach_add([K, J], [K, J])",
          lambda d: torch._foreach_add([d("K", a()), d("J", a(seed=1))], [d("K", a(seed=2)), d("J", a(seed=3))]),
          "ok K"),
    Mixed("_foreach_add([K], [J])", lambda d: torch._foreach_add([d("K", a())], [d("J", a(seed=1))]), "error"),
    # arguments on two flagos devices
    Mixed("x(K) + y(J)", lambda d: d("K", a()) + d("J", a(seed=1)), "error"),
    Mixed("x(K).add_(y(J))", lambda d: d("K", a()).add_(d("J", a(seed=1))), "error"),
    Mixed("add(x(K), y(K), out=J)", lambda d: torch.add(d("K", a()), d("K", a(seed=1)), out=d("J", a())), "error"),
    Mixed("mm(K, J)", lambda d: torch.mm(d("K", a()), d("J", a((3, 2)))), "error"),
    Mixed("addmm(K, K, J)", lambda d: torch.addmm(d("K", a((2, 2))), d("K", a()), d("J", a((3, 2)))), "error"),
    Mixed("where(mask K, x K, y J)",
          lambda d: torch.where(d("K", a() > 0), d("K", a()), d("J", a(seed=1))), "error"),
]


class Placer:
    """d(role, tensor): the tensor on the role's device; all on the CPU for the reference."""

    def __init__(self, device: bool):
        self.device = device

    def __call__(self, role: str, tensor: torch.Tensor) -> torch.Tensor:
        return tensor.to(ROLES[role]) if self.device else tensor.clone()


def _cpu(value):
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (list, tuple)):
        return [_cpu(v) for v in value]
    return value


def _devices(value) -> set:
    return {t.device for t in tensors_in(value)}


@pytest.mark.parametrize("row", MIXED, ids=[m.id for m in MIXED])
def test_mixed_device(row: Mixed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.flagos.set_device(CURRENT)
        if row.outcome == "error":
            with pytest.raises((RuntimeError, IndexError), match=re.escape(row.error)) as info:
                row.call(Placer(True))
            for role in row.names:
                assert ROLES[role] in str(info.value), f"the error does not name {ROLES[role]}: {info.value}"
            assert torch.flagos.current_device() == CURRENT
            assert torch_fl.sim.stats()["rejected_launches"] == 0
            return
        expected = row.call(Placer(False))
        torch_fl.sim.reset_stats()
        result = row.call(Placer(True))
        stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == CURRENT
    assert stats["rejected_launches"] == 0 and stats["mismatched_launches"] == 0, stats
    assert stats["launches"][CURRENT] == 0, f"{row.id} launched on the current device, which holds no tensor"
    if isinstance(result, torch.Tensor):
        expected_device = torch.device(ROLES[row.outcome.split()[1]])
        assert result.device == expected_device, f"{row.id}: on {result.device}, not {expected_device}"
    torch.testing.assert_close(_cpu(result), _cpu(expected), equal_nan=True)


def test_foreach_lists_spanning_devices_launch_on_each_device():
    """A tensor list over two devices: each device runs the launches of its own tensors."""
    xs = [a().to("flagos:2"), a(seed=1).to("flagos:1")]
    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    torch._foreach_add_(xs, 1.0)
    stats = torch_fl.sim.stats()
    assert stats["launches"][1] >= 1 and stats["launches"][2] >= 1 and stats["launches"][CURRENT] == 0, stats
    assert stats["rejected_launches"] == 0
    assert torch.flagos.current_device() == CURRENT


# ---- the document ------------------------------------------------------------------

DOC = os.path.join(REPO, "docs", "mixed-device.md")
ROW_RE = re.compile(r"^\|\s*`([^`]+)`\s*\|.*\|\s*(ok on K|ok on J|ok on the CPU|error)[^|]*\|\s*$")


def _doc_rows() -> dict[str, str]:
    rows = {}
    with open(DOC, encoding="utf-8") as handle:
        for line in handle:
            match = ROW_RE.match(line.strip())
            if match:
                rows[match.group(1)] = match.group(2)
    return rows


def test_document_matches_the_tests():
    outcome_words = {"ok K": "ok on K", "ok J": "ok on J", "ok cpu": "ok on the CPU", "error": "error"}
    doc = _doc_rows()
    tested = {m.id: outcome_words[m.outcome] for m in MIXED}
    assert doc == tested, (f"docs/mixed-device.md and MIXED disagree: only in the doc {sorted(set(doc) - set(tested))}, "
                           f"only in the tests {sorted(set(tested) - set(doc))}, different outcome "
                           f"{sorted(k for k in set(doc) & set(tested) if doc[k] != tested[k])}")


# ---- registry-driven: two flagos devices, CPU 0-dim operands ----------------------

# Ops that do not raise the same-device error on two flagos devices, and what they raise.
TWO_DEVICE_ERRORS = {
    "index.Tensor": "indices should be either on cpu or on the same device as the indexed tensor",
    # Its case runs scaled_dot_product_attention forward and backward: PyTorch checks the
    # inputs' devices first (the kernel's own same-device check follows it).
    "_scaled_dot_product_fused_attention_overrideable_backward":
        "Expected query, key, and value to have the same device type",
}


def _first_case(spec):
    for case in cases_for(spec.op):
        if not case.empty and case.layout == "contiguous" and case.check is None:
            return case
    return None


def _positions(case) -> list:
    """The arguments (by position or keyword) that hold tensors, in call order."""
    def holds(v):
        return isinstance(v, (torch.Tensor, Out)) or (isinstance(v, (list, tuple)) and any(
            isinstance(x, (torch.Tensor, Out)) for x in v))
    return [("arg", i) for i, v in enumerate(case.args) if holds(v)] + \
           [("kw", k) for k, v in case.kwargs.items() if holds(v)]


def _place_split(case, moved, device, other):
    args = tuple(place(v, other if ("arg", i) == moved else device) for i, v in enumerate(case.args))
    kwargs = {k: place(v, other if ("kw", k) == moved else device) for k, v in case.kwargs.items()}
    return args, kwargs


TWO_TENSOR_OPS = [s for s in registry_ops()
                  if s.device_check == "same-device" and _first_case(s) and len(_positions(_first_case(s))) >= 2]


@pytest.mark.parametrize("spec", TWO_TENSOR_OPS, ids=lambda s: s.op)
def test_two_flagos_devices_raise(spec):
    """The last tensor argument on flagos:1, the others on flagos:2: the same-device error, naming both."""
    case = _first_case(spec)
    moved = _positions(case)[-1]
    args, kwargs = _place_split(case, moved, "flagos:2", "flagos:1")
    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    message = TWO_DEVICE_ERRORS.get(spec.op, SAME_DEVICE)
    with pytest.raises((RuntimeError, IndexError), match=re.escape(message)) as info:
        case.call(args, kwargs, "flagos:2")
    assert "flagos:2" in str(info.value)
    if spec.op not in TWO_DEVICE_ERRORS:
        assert "flagos:1" in str(info.value), str(info.value)
    assert torch.flagos.current_device() == CURRENT
    stats = torch_fl.sim.stats()
    assert stats["rejected_launches"] == 0


# Ops that reject a CPU 0-dim tensor in place of a later tensor argument (as CUDA
# does for ops outside TensorIterator), with the argument it is checked as.
CPU_SCALAR_REJECTED: dict[str, str] = {
    # F.mse_loss broadcasts its inputs first (torch.broadcast_tensors), so a CPU 0-dim
    # target arrives expanded, no longer 0-dim: CUDA rejects it the same way.
    "mse_loss": "target",
    # a CPU 0-dim out= tensor is on another device, not a number (OUT_DEVICE below)
    "max_pool2d_with_indices.out": "indices",
    "max_pool2d_with_indices_backward.grad_input": "grad_input",
    "avg_pool2d_backward.grad_input": "grad_input",
    # ATen's meta function builds a TensorIterator that takes no CPU scalar (CUDA raises too)
    "clamp.Tensor": "max",
    "clamp.Tensor_out": "max",
    "clamp_.Tensor": "max",
    # polar_out builds a TensorIterator that takes no CPU scalar (CUDA raises too)
    "polar.out": "angle",
}


def _scalar_case(spec):
    """The first case with its last plain tensor argument replaced by a CPU 0-dim tensor of
    the same dtype, when the CPU accepts that call; else None."""
    case = _first_case(spec)
    if case is None:
        return None
    positions = [p for p in _positions(case)
                 if isinstance(case.args[p[1]] if p[0] == "arg" else case.kwargs[p[1]], torch.Tensor)]
    if len(positions) < 2:
        return None
    kind, key = positions[-1]
    value = case.args[key] if kind == "arg" else case.kwargs[key]
    if value.dim() == 0:
        return None
    scalar = Cpu(value.reshape(-1)[0].clone())
    args = tuple(scalar if (kind == "arg" and i == key) else v for i, v in enumerate(case.args))
    kwargs = {k: scalar if (kind == "kw" and k == key) else v for k, v in case.kwargs.items()}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = case.call(*place((args, kwargs), "cpu"), "cpu")
    except Exception:  # noqa: BLE001  (the op takes no 0-dim tensor there)
        return None
    return case, args, kwargs, expected


# A structured op's out= tensor is checked by ATen's meta function through the
# generated wrapper (runtime/structured.h), which refuses a CPU 0-dim one with this.
OUT_DEVICE = "Expected out tensor to have device flagos:2, but got cpu instead"
OUT_REJECTED = {"max_pool2d_with_indices.out", "max_pool2d_with_indices_backward.grad_input",
                "avg_pool2d_backward.grad_input"}


# Ops for which a CPU 0-dim tensor in that place is no meaningful input, with the reason.
SCALAR_NOT_APPLICABLE = {
    **{op: "ATen's meta function refuses a CPU source with its own message (\"self, index and source expected to "
           "be in the same device\"), as CUDA does" for op in ("index_copy", "index_copy.out", "index_copy_")},
    "_log_softmax_backward_data": "`output` must have the shape of `grad_output`: the CPU kernel reads a 0-dim "
                                  "`output` without a check and returns values that are no behaviour to match",
    "_native_batch_norm_legit.no_stats": "a 0-dim `bias` is no per-channel parameter: the CPU kernel reads it without "
                                         "a check; flagos raises native_batch_norm's shape error",
}

SCALAR_OPS = [s for s in registry_ops() if s.device_check == "same-device" and s.op not in SCALAR_NOT_APPLICABLE
              and _scalar_case(s) is not None]


@pytest.mark.parametrize("spec", SCALAR_OPS, ids=lambda s: s.op)
def test_cpu_zero_dim_operand(spec):
    case, args, kwargs, expected = _scalar_case(spec)
    placed_args, placed_kwargs = place((args, kwargs), "flagos:2")
    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    if spec.op in CPU_SCALAR_REJECTED:
        with pytest.raises(RuntimeError, match=OUT_DEVICE if spec.op in OUT_REJECTED else SAME_DEVICE):
            case.call(placed_args, placed_kwargs, "flagos:2")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = case.call(placed_args, placed_kwargs, "flagos:2")
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == CURRENT
    assert stats["rejected_launches"] == 0, stats
    assert all(d == 0 for dev, d in stats["launches"].items() if dev != 2), stats["launches"]
    assert _devices(result) <= {torch.device("flagos", 2)}
    torch.testing.assert_close(_cpu(result), _cpu(expected), rtol=1e-4, atol=1e-5, equal_nan=True)
