"""Runtime tests of every generated op, read from the registry (a new op is covered automatically).

Each op runs with its tensors on flagos:1 while flagos:0 is current, and is
compared with the same ATen overload on the CPU. The result must be on
flagos:1, the caller's current device must be unchanged, the simulator must
have rejected no launch and run none on device 0, and the op must not have
gone through the CPU fallback (the generated kernel ran).

Needs the built backend (`import torch_fl`); skipped cleanly without it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import pytest

import torch

try:
    import torch_fl
except (ImportError, OSError) as error:  # the backend is not built
    pytest.skip(f"torch_fl cannot be imported: {error}", allow_module_level=True)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from codegen.registry import Paths, load_registry  # noqa: E402
from codegen.schemas import aten_schemas  # noqa: E402

REGISTRY = load_registry(Paths(REPO))
SCHEMAS = aten_schemas()

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 2, reason="needs two flagos devices")

DEVICE = "flagos:1"  # where the tensors live
CURRENT = 0  # the thread's current device during the call


@dataclass(frozen=True)
class CpuScalar:
    """A CPU 0-dim tensor passed as is (not a Python number): it stays on the CPU on both sides."""

    value: float


@dataclass
class Case:
    name: str
    args: tuple
    kwargs: dict = field(default_factory=dict)


def overload(op: str):
    name, _, overload_name = op.partition(".")
    return getattr(getattr(torch.ops.aten, name), overload_name or "default")


def _rand(*sizes, positive=False):
    gen = torch.Generator().manual_seed(hash(sizes) % 1000)
    data = torch.rand(*sizes, generator=gen) + 0.5 if positive else torch.randn(*sizes, generator=gen)
    return data


def _scalar_args(schema, first: float = 2.5) -> dict:
    """Values for the Scalar and int arguments after self, by name."""
    return {a.name: first if a.name in ("other", "exponent") else 1.0
            for a in schema.arguments if a.kind == "scalar" and not a.is_kwarg_only}


def _accepts_python_number(op: str, shape: str) -> bool:
    """Whether torch turns a Python number into a wrapped-number tensor for `other` of this overload."""
    try:
        overload(op)(torch.ones(2), 0.5, **({"out": torch.empty(0)} if shape == "out" else {}))
    except RuntimeError:
        return False  # its CPU 0-dim case covers the scalar path
    return True


# ---- elementwise math (yaml/ops/unary.yaml, unary_math.yaml, binary_math.yaml, scalar.yaml,
# activation_backward.yaml, selection.yaml; their in-place and out= forms are forms of their families) ----
# Their inputs are built from the schema: every Tensor argument a sample
# (self full size; the others also broadcast), every Scalar a value by name,
# integers for the bitwise ops, a domain per op, and out= forms an `out` of
# the matching dtype.
_ELEMENTWISE_FILES = ("unary.yaml", "unary_math.yaml", "binary_math.yaml", "scalar.yaml", "activation_backward.yaml",
                      "selection.yaml")
_INTEGER_OPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
_POSITIVE_OPS = ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "pow")
_UNIT_OPS = ("asin", "acos")  # |x| < 1
_BOOL_OPS = ("isposinf", "isneginf", "isin")  # their out= tensors are bool
_SAME_SIZE_OPS = ("gelu_backward",)  # no broadcast: ATen's CPU kernel refuses it too
_SCALAR_VALUES = {"other": 2.5, "exponent": 2.0, "min": -0.5, "max": 0.5, "weight": 0.25, "threshold": 0.1}


def _elementwise_cases(entry, schema) -> list[Case]:
    base = entry.op.split(".")[0].rstrip("_")
    integer = base in _INTEGER_OPS

    def sample(*sizes):
        if integer:
            return (_rand(*sizes) * 8).to(torch.int64)
        if base in _UNIT_OPS:
            return _rand(*sizes).tanh() * 0.9
        return _rand(*sizes, positive=base in _POSITIVE_OPS)

    inputs = [a for a in schema.arguments if not a.is_out and not a.is_kwarg_only]
    tensors = [a.name for a in inputs if a.kind in ("tensor", "optional_tensor")]

    def args(broadcast: bool, **override) -> tuple:
        values = []
        for a in inputs:
            if a.name in override:
                values.append(override[a.name])
            elif a.kind in ("tensor", "optional_tensor"):
                sizes = (4,) if broadcast and a.name != tensors[0] else (3, 4)
                value = sample(*sizes).roll(tensors.index(a.name))  # distinct values per argument
                values.append(value > 0 if a.name == "condition" else value)  # where's bool condition
            elif a.kind in ("scalar", "optional_scalar"):  # clamp's optional bounds: both given
                values.append(3 if integer else _SCALAR_VALUES.get(a.name, 1.0))
            else:
                raise AssertionError(f"{entry.op}: no sample for argument {a.name} ({a.type})")
        return tuple(values)

    cases = [Case("same size", args(False))]
    if len(tensors) >= 2 and base not in _SAME_SIZE_OPS:
        cases.append(Case("broadcast", args(True)))
    if len(tensors) >= 2:
        operand = next((a.name for a in inputs if a.kind == "tensor" and a.name != tensors[0]), None)
        if operand is not None:  # a Python number reaching a Tensor argument
            cases.append(Case("cpu 0-dim tensor", args(False, **{operand: CpuScalar(3 if integer else 0.75)})))
        for a in inputs:
            if a.kind == "optional_tensor":
                cases.append(Case(f"without {a.name}", args(True, **{a.name: None})))
    elif entry.shape in ("unary", "inplace", "out"):
        cases.append(Case("non-contiguous", tuple(sample(4, 3).t() if isinstance(v, torch.Tensor) else v
                                                  for v in args(False))))
    outs = [a.name for a in schema.arguments if a.is_out]
    for case in cases:
        for name in outs:
            case.kwargs[name] = torch.empty(0, dtype=torch.bool if base in _BOOL_OPS else
                                            torch.int64 if integer else torch.float32)
    return cases


def cases_for(entry) -> list[Case]:
    schema = SCHEMAS.get(entry.op)
    if os.path.basename(entry.loc.file) in _ELEMENTWISE_FILES:
        return _elementwise_cases(entry, schema)
    positive = entry.op.split(".")[0].rstrip("_") in ("log", "sqrt", "rsqrt", "div", "pow")
    shape = entry.shape
    if shape == "inplace" and schema.argument("mat") is not None:  # addmv_: self += mat @ vec
        return [Case("operands", (_rand(3), _rand(3, 4), _rand(4)))]
    if entry.op == "roll":  # unary, but its shifts have no default
        x = _rand(3, 4)
        return [Case("one dim", (x, [1], [0])), Case("two dims", (x, [1, -2], [0, 1])),
                Case("flattened", (x, [5])), Case("non-contiguous", (_rand(4, 3).t(), [2], [-1]))]
    if shape == "inplace" and schema.argument("index") is not None:  # the in-place forms of indexing families
        x, rows, index2d = _rand(3, 4), _rand(2, 4), torch.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])
        inputs = {"scatter_.src": (x, 0, index2d, rows), "scatter_.value": (x, -2, index2d, 2.5),
                  "scatter_add_": (x, 0, index2d, rows), "index_add_": (x, 0, torch.tensor([2, 0]), rows),
                  "index_copy_": (x, -1, torch.tensor([3, 0]), _rand(3, 2))}
        return [Case("index", inputs[entry.op])]
    if entry.op == "flip":  # unary, but its dims have no default
        x = _rand(3, 4)
        return [Case("one dim", (x, [0])), Case("two dims, negative", (x, [0, -1])), Case("no dim", (x, [])),
                Case("non-contiguous", (_rand(4, 3).t(), [-1]))]
    if entry.op.split(".")[0] in ("mm", "bmm"):  # self @ mat2, functional and out=
        batch = (2,) if entry.op.startswith("bmm") else ()
        out = {"out": torch.empty(0)} if shape == "out" else {}
        # An empty inner dim sums nothing: zeros (the alternate launch).
        return [Case("operands", (_rand(*batch, 3, 5), _rand(*batch, 5, 4)), dict(out)),
                Case("empty inner dim", (_rand(*batch, 3, 0), _rand(*batch, 0, 4)), dict(out))]
    if shape in ("unary", "inplace") and schema.argument("other") is None:
        x = _rand(3, 4, positive=positive)
        return [Case("contiguous", (x,)), Case("non-contiguous", (_rand(4, 3, positive=positive).t(),))]
    values = {"size": [2, 3], "fill_value": 1.5, "start": 1, "end": 11, "step": 3, "steps": 5, "n": 3, "m": 4}
    if shape == "out" and schema.argument("other") is None:
        positional = tuple(values[a.name] for a in schema.arguments if not (a.is_kwarg_only or a.is_out))
        return [Case("out", positional, {"out": torch.empty(0)})]
    if shape in ("binary", "inplace", "out"):
        x, y = _rand(3, 4, positive=positive), _rand(4, positive=positive)
        cases = [Case("broadcast", (x, y)), Case("same size", (x, _rand(3, 4, positive=positive)))]
        if _accepts_python_number(entry.op, shape):
            cases.append(Case("wrapped number", (x, 0.5)))  # a Python number: x + 0.5
        cases.append(Case("cpu 0-dim tensor", (x, CpuScalar(0.75))))
        if shape == "out":
            for case in cases:
                case.kwargs["out"] = torch.empty(0)
        if schema.argument("rounding_mode") is not None:  # div's *_mode forms: each mode, None too
            cases = [Case(f"{case.name}, {mode}", case.args, {**case.kwargs, "rounding_mode": mode})
                     for case in cases for mode in (None, "trunc", "floor")]
        return cases
    if shape == "tensor_scalar":
        x = _rand(3, 4, positive=positive)
        return [Case("scalar", (x, *_scalar_args(schema).values()))]
    if shape == "reduction":
        x = _rand(3, 4, 5)
        return [Case("one dim", (x, [1], False)), Case("two dims, keepdim", (x, [0, -1], True)),
                Case("all dims", (x, [], False))]
    if shape == "softmax":
        x = _rand(3, 4)
        return [Case("dim 1", (x, 1, False)), Case("dim -2", (x, -2, False))]
    if shape == "matmul":
        sizes = {"mat1": (3, 5), "mat2": (5, 4), "batch1": (2, 3, 5), "batch2": (2, 5, 4), "vec": (4,), "tensor": (4,)}
        names = [a.name for a in schema.arguments if a.kind == "tensor"]
        others = set(names) - {"self"}
        self_size = {"vec": (3, 4), "tensor": (4,), "mat1": (3, 4), "batch1": (2, 3, 4)}[sorted(others)[0]]
        tensors = [_rand(*(self_size if n == "self" else sizes[n])) for n in names]
        cases = [Case("operands", tuple(tensors))]
        if "mat1" in others:
            cases.append(Case("broadcast bias", (_rand(4), *tensors[1:])))
        return cases
    if shape == "factory":
        positional = tuple(values[a.name] for a in schema.arguments if not (a.is_kwarg_only or a.is_out))
        return [Case("device argument", positional, {"device": "DEVICE"}),
                Case("dtype", positional, {"device": "DEVICE", "dtype": torch.float64})]
    if shape == "general":
        return []  # per-op inputs in their own tests (reductions, norms, linalg: test_general_ops.py)
    raise AssertionError(f"no sample inputs for shape {shape}: add them here")


def _place(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device, copy=True)  # in-place ops must not write the shared sample
    if isinstance(value, CpuScalar):
        return torch.tensor(value.value)
    if isinstance(value, list):
        return [_place(v, device) for v in value]
    if value == "DEVICE":
        return torch.device(device)
    return value


def _call(op, case: Case, device: str):
    args = tuple(_place(a, device) for a in case.args)
    kwargs = {k: _place(v, device) for k, v in case.kwargs.items()}
    result = op(*args, **kwargs)
    # In-place and out= forms return (and write) their first argument or `out`.
    return result, args


PARAMS = [pytest.param(entry, case, id=f"{entry.op}-{case.name}") for entry in REGISTRY.ops for case in cases_for(entry)]


@pytest.mark.parametrize("entry,case", PARAMS)
def test_op_runs_on_its_tensors_device(entry, case):
    op = overload(entry.op)
    expected, _ = _call(op, case, "cpu")

    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    result, args = _call(op, case, DEVICE)
    stats = torch_fl.sim.stats()

    assert torch.flagos.current_device() == CURRENT
    results = result if isinstance(result, tuple) else (result,)  # log_sigmoid_forward: (output, buffer)
    assert all(r.device == torch.device(DEVICE) for r in results)
    assert stats["rejected_launches"] == 0
    assert stats["launches"].get(CURRENT, 0) == 0, stats["launches"]
    assert stats["launches"].get(1, 0) >= 1
    assert stats["fallback_ops"] == {}, stats["fallback_ops"]  # the generated kernel ran, nothing on the CPU
    torch.testing.assert_close(tuple(r.cpu() for r in results) if isinstance(result, tuple) else result.cpu(),
                               expected, equal_nan=True)
    if entry.shape == "inplace":
        assert result is args[0] or result.data_ptr() == args[0].data_ptr()


def test_seed_reproducer():
    """The issue's reproducer: a Python number added to a tensor of another device."""
    torch.flagos.set_device(1)
    x = torch.tensor([1.0, 2.0, 4.0], device="flagos:0")
    torch_fl.sim.reset_stats()
    y = x + 0.5
    stats = torch_fl.sim.stats()
    assert y.device == torch.device("flagos:0")
    assert torch.flagos.current_device() == 1
    assert stats["rejected_launches"] == 0 and stats["op_launches"].get("aclnnAdds", 0) == 1
    torch.flagos.synchronize(0)
    assert y.cpu().tolist() == [1.5, 2.5, 4.5]


def test_tensors_on_two_devices_are_rejected():
    x = torch.ones(3, device="flagos:0")
    y = torch.ones(3, device="flagos:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.add(x, y)
