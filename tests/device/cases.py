"""Sample cases for every op of the registry, for the device tests.

The op list is read from the registry (`codegen.registry.load_registry`:
yaml/ops/*.yaml and yaml/handwritten.yaml), so an op added there is covered
here without writing a test. Samples come, in this order, from

1. `SPECIAL`: a short explicit table, only for ops that need inputs no
   general source gives (copies, fill_ with a tensor value, indexing);
2. PyTorch's OpInfo database (`op_db`): the OpInfos whose name matches the
   overload's base name; each sample is run on the CPU through the OpInfo's
   function, method, in-place and out= variants under a dispatch mode that
   records the ATen overloads called, and a sample is kept for the overload
   it really reaches (`torch.add(x, y)` -> add.Tensor, `x.add_(y)` ->
   add_.Tensor, `torch.add(x, y, out=o)` -> add.out);
3. the overload's schema: a value per argument type (tensors, lists,
   scalars, dims, sizes, devices), called through `torch.ops.aten`.

A few samples are picked per op to cover different features (plain,
broadcasting, 0-dim, empty, Python numbers), and the first plain sample is
repeated as a non-contiguous and as an offset view.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import re
import sys
import types
import unittest
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from codegen.registry import Paths, load_registry  # noqa: E402

MAX_SAMPLES = 4  # OpInfo/schema samples per op, before the layout variants
SAMPLE_SCAN = 40  # OpInfo samples looked at per OpInfo


# ---- the registry ------------------------------------------------------------


@dataclass(frozen=True)
class OpSpec:
    op: str  # ATen overload: "add.Tensor"
    kind: str  # generated | handwritten
    shape: str  # the generated kernel shape, "-" for handwritten
    guard: str  # first-tensor | explicit-arg | none
    device_check: str  # same-device | no-check
    kernels: frozenset  # ACLNN operators the op may launch
    where: str  # file:line of its registry entry

    @property
    def overload(self):
        name, _, overload_name = self.op.partition(".")
        return getattr(getattr(torch.ops.aten, name), overload_name or "default")

    @property
    def base(self) -> str:
        return self.op.partition(".")[0]

    @property
    def inplace(self) -> bool:
        return self.base.endswith("_") and not self.base.startswith("__")

    @property
    def names_a_device(self) -> bool:
        """An argument is a tensor, a tensor list or a device: the op must run on that device,
        whatever policy the registry declares (the matrix does not read the policy)."""
        def names(t) -> bool:
            if isinstance(t, (torch.TensorType, torch.DeviceObjType)):
                return True
            if isinstance(t, (torch.OptionalType, torch.ListType)):
                return names(t.getElementType())
            return False
        return any(names(arg.type) for arg in self.overload._schema.arguments)


_LAUNCH_RE = re.compile(r"FLAGOS_GUARDED_LAUNCH\s*\(\s*[^,]+,\s*(aclnn\w+)")


@functools.lru_cache(maxsize=None)
def _kernels_in(path: str) -> frozenset:
    """The ACLNN operators a handwritten file launches (per file, not per op)."""
    try:
        with open(os.path.join(REPO, path), encoding="utf-8") as handle:
            return frozenset(_LAUNCH_RE.findall(handle.read()))
    except OSError:
        return frozenset()


@functools.lru_cache(maxsize=None)
def registry_ops() -> tuple[OpSpec, ...]:
    registry = load_registry(Paths(REPO))
    specs = []
    for entry in registry.ops:
        kernels = {entry.launch.entry} | ({entry.wrapped_number.entry} if entry.wrapped_number else set()) \
            | ({entry.alternate.entry} if entry.alternate else set())
        specs.append(OpSpec(entry.op, "generated", entry.shape, entry.policy.guard.value,
                            entry.policy.device_check.value, frozenset(kernels), str(entry.loc)))
    for entry in registry.handwritten:
        specs.append(OpSpec(entry.op, "handwritten", "-", entry.policy.guard.value,
                            entry.policy.device_check.value, _kernels_in(entry.file), str(entry.loc)))
    return tuple(sorted(specs, key=lambda s: s.op))


# ---- values that are placed when a case runs ------------------------------------


class _Device:
    """The flagos device the case runs on (a factory's `device` argument)."""

    def __repr__(self) -> str:
        return "DEVICE"


DEVICE = _Device()


@dataclass(frozen=True)
class Out:
    """An out= tensor: empty, of this dtype, on the case's device (resized by the op)."""

    dtype: torch.dtype


@dataclass(frozen=True)
class Cpu:
    """A tensor that stays on the CPU on both sides (a CPU 0-dim operand, CPU indices)."""

    value: torch.Tensor


def _to_device(t: torch.Tensor, device: str, layout: str) -> torch.Tensor:
    if layout == "contiguous" or t.numel() <= 1:  # a single element has no non-contiguous view
        return t.to(device, copy=True)
    if layout == "noncontig":  # every other element of a buffer twice as large
        if t.numel() == 1:  # one element is contiguous whatever its strides
            return t.to(device, copy=True)
        buf = torch.zeros(*t.shape, 2, dtype=t.dtype)
        buf[..., 0] = t
        view = buf.to(device)[..., 0]
        assert not view.is_contiguous()
        return view
    if layout == "offset":  # a contiguous view 3 elements into its storage
        buf = torch.zeros(t.numel() + 3, dtype=t.dtype)
        buf[3:] = t.reshape(-1)
        view = buf.to(device)[3:].view(t.shape)
        assert view.storage_offset() == 3
        return view
    raise ValueError(layout)


def place(value: Any, device: str, layout: str = "contiguous") -> Any:
    """A fresh copy of a sample value with its tensors on `device` ("cpu" or "flagos:k")."""
    if isinstance(value, torch.Tensor):
        return value.clone() if device == "cpu" else _to_device(value, device, layout)
    if value is DEVICE:
        return torch.device(device)
    if isinstance(value, Out):
        return torch.empty(0, dtype=value.dtype, device=device)
    if isinstance(value, Cpu):
        return value.value.clone()
    if isinstance(value, list):
        return [place(v, device, layout) for v in value]
    if isinstance(value, tuple):
        return tuple(place(v, device, layout) for v in value)
    if isinstance(value, dict):
        return {k: place(v, device, layout) for k, v in value.items()}
    return value


def tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Cpu):
        return [value.value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


# ---- cases ---------------------------------------------------------------------


@dataclass
class Case:
    spec: OpSpec
    label: str  # where the sample came from and what it covers
    fn: Callable
    args: tuple
    kwargs: dict = field(default_factory=dict)
    layout: str = "contiguous"
    ref: Callable | None = None  # the CPU reference; `fn` on CPU tensors by default
    tags: tuple = ()
    # For results no CPU call can reproduce (random draws): a predicate on the
    # device result, brought to the CPU, used instead of the comparison.
    check: Callable | None = None
    _empty_result: bool | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        layout = "" if self.layout == "contiguous" else f"-{self.layout}"
        return f"{self.label}{layout}"

    @property
    def empty(self) -> bool:
        """No element to compute (an empty input or result): the kernel may return without launching."""
        if any(t.numel() == 0 for t in tensors_in((self.args, self.kwargs))):
            return True
        if self._empty_result is None:
            try:
                result, _ = self.run("cpu")
                self._empty_result = any(t.numel() == 0 for t in tensors_in(result))
            except Exception:  # noqa: BLE001  (the comparison will show it)
                self._empty_result = False
        return self._empty_result

    def place(self, device: str) -> tuple[tuple, dict]:
        """Fresh arguments with their tensors on `device` ("cpu" or "flagos:k")."""
        return place(self.args, device, self.layout), place(self.kwargs, device, self.layout)

    def call(self, args: tuple, kwargs: dict, device: str):
        fn = self.ref if (device == "cpu" and self.ref is not None) else self.fn
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resize and fallback warnings
            return fn(*args, **kwargs)

    def run(self, device: str):
        """Runs the case with its tensors on `device`; returns (result, args after the call)."""
        args, kwargs = self.place(device)
        return self.call(args, kwargs, device), (args, kwargs)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, complex)) and not isinstance(v, bool)


def _tags(args: tuple, kwargs: dict) -> tuple:
    tensors = tensors_in((args, kwargs))
    tags = []
    if any(t.numel() == 0 for t in tensors):
        tags.append("empty")
    elif any(t.dim() == 0 for t in tensors):
        tags.append("0-dim")
    shapes = {tuple(t.shape) for t in tensors if t.dim() > 0}
    if len(shapes) > 1:
        tags.append("broadcast")
    if tensors and any(isinstance(v, float) for v in args[1:]):
        tags.append("number")
    return tuple(tags) or ("plain",)


class _Recorder(TorchDispatchMode):
    """Records the ATen overloads a call reaches."""

    def __init__(self):
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.name()
        self.ops.add(name.split("::", 1)[-1])
        return func(*args, **(kwargs or {}))


def reached(fn: Callable, args: tuple, kwargs: dict) -> tuple[set[str], Any]:
    """The overloads `fn` reaches on these CPU values, and its result (raises on error)."""
    recorder = _Recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with recorder:
            result = fn(*place(args, "cpu"), **place(kwargs, "cpu"))
    return recorder.ops, result


# ---- source 2: OpInfo ------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def op_db() -> tuple:
    """PyTorch's OpInfo database. torch's testing helpers import `expecttest` only for
    a TestCase base class; a stand-in is used when the package is not installed."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub
    from torch.testing._internal.common_methods_invocations import op_db as db

    return tuple(db)


def _opinfos_for(spec: OpSpec) -> list:
    base = spec.base
    names = {base, base.rstrip("_"), base.lstrip("_"), base.strip("_")}
    return [info for info in op_db()
            if info.name in names or info.aten_name in names or info.name.rsplit(".", 1)[-1] in names]


def _dtype_for(info) -> torch.dtype:
    supported = info.supported_dtypes("cpu")
    for dtype in (torch.float32, torch.int64, torch.bool):
        if dtype in supported:
            return dtype
    return torch.float32


def _as_sample_value(v: Any) -> Any:
    if isinstance(v, str) and v == "cpu":
        return DEVICE
    if isinstance(v, torch.device) and v.type == "cpu":
        return DEVICE
    return v


def _out_spec(result: Any) -> Any:
    if isinstance(result, torch.Tensor):
        return Out(result.dtype)
    if isinstance(result, (tuple, list)):
        return tuple(_out_spec(r) for r in result)
    raise TypeError(type(result))


_SAMPLES: dict = {}


def _samples(info) -> list:
    """The first samples of an OpInfo on the CPU, made once per OpInfo, with a fixed seed.
    `sample_inputs_func` is called directly: `OpInfo.sample_inputs` inspects the call
    stack on every call, which costs a tenth of a second."""
    key = id(info)
    if key not in _SAMPLES:
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)
                samples = list(itertools.islice(info.sample_inputs_func(info, "cpu", _dtype_for(info), False),
                                                SAMPLE_SCAN))
        except Exception:  # an OpInfo that cannot sample on this build
            samples = []
        _SAMPLES[key] = samples
    return _SAMPLES[key]


def _opinfo_cases(spec: OpSpec) -> list[Case]:
    target = spec.op
    factory = any(a.name == "device" for a in spec.overload._schema.arguments)
    cases: list[Case] = []
    for info in _opinfos_for(spec):
        samples = _samples(info)
        variants = [("", info.op), ("method", info.method_variant), ("inplace", info.inplace_variant)]
        for index, sample in enumerate(samples):
            args = (_as_sample_value(sample.input),) + tuple(_as_sample_value(a) for a in sample.args)
            kwargs = {k: _as_sample_value(v) for k, v in sample.kwargs.items()}
            if factory and not tensors_in((args, kwargs)) and "device" not in kwargs:
                kwargs["device"] = DEVICE  # a factory sample without a device would make a CPU tensor
            found = None
            for variant_name, fn in variants:
                if fn is None:
                    continue
                try:
                    ops, result = reached(fn, args, kwargs)
                except Exception:
                    continue
                if target in ops:
                    found = (variant_name, fn, kwargs)
                    break
                if variant_name == "" and info.supports_out and isinstance(result, (torch.Tensor, tuple)):
                    out_kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "requires_grad")}
                    try:
                        out_kwargs["out"] = _out_spec(result)
                        ops, _ = reached(fn, args, out_kwargs)
                    except Exception:
                        continue
                    if target in ops:
                        found = ("out", fn, out_kwargs)
                        break
            if found is None:
                continue
            variant_name, fn, call_kwargs = found
            label = f"opinfo:{info.name}{'.' + info.variant_test_name if info.variant_test_name else ''}"
            label += f"{'.' + variant_name if variant_name else ''}#{index}"
            cases.append(Case(spec, label, fn, args, call_kwargs, tags=_tags(args, call_kwargs)))
    if not cases:
        cases = _direct_cases(spec)
    return cases


def _direct_cases(spec: OpSpec) -> list[Case]:
    """OpInfo samples passed to the overload itself: for ops whose public function never
    reaches the overload on the CPU (a CompositeImplicit op such as matmul, which the CPU
    decomposes but flagos implements)."""
    schema = spec.overload._schema
    out_names = [a.name for a in schema.arguments if a.is_out]
    cases: list[Case] = []
    for info in _opinfos_for(spec):
        samples = _samples(info)
        for index, sample in enumerate(samples):
            args = (_as_sample_value(sample.input),) + tuple(_as_sample_value(a) for a in sample.args)
            kwargs = {k: _as_sample_value(v) for k, v in sample.kwargs.items()}
            try:
                if out_names:
                    _, result = reached(info.op, args, kwargs)
                    outs = _out_spec(result)
                    outs = outs if isinstance(outs, tuple) else (outs,)
                    kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "requires_grad")}
                    kwargs.update(zip(out_names, outs))
                reached(spec.overload, args, kwargs)
            except Exception:
                continue
            label = f"opinfo:{info.name}{'.' + info.variant_test_name if info.variant_test_name else ''}"
            label += f".direct{'.out' if out_names else ''}#{index}"
            cases.append(Case(spec, label, spec.overload, args, kwargs, tags=_tags(args, kwargs)))
    return cases


# ---- source 3: the schema --------------------------------------------------------


def _schema_value(arg, integral: bool) -> Any:
    kind = str(arg.type)
    name = arg.name
    gen = torch.Generator().manual_seed(len(name))
    if integral:
        tensor = lambda: torch.randint(0, 10, (3, 4), generator=gen)  # noqa: E731
    else:
        tensor = lambda: torch.rand(3, 4, generator=gen) + 0.5  # noqa: E731  (positive: log, sqrt, pow)
    if arg.is_out:
        return Out(torch.int64 if "indices" in name or integral else torch.float32)
    if kind == "Tensor":
        return tensor()
    if kind == "List[Tensor]":
        return [tensor(), tensor()]
    if kind in ("number", "Scalar"):
        return 3 if integral else 1.5
    if kind == "int" and (name == "dtype" or name.endswith("_dtype")):  # a ScalarType
        return torch.float32
    if kind == "int":
        return 1
    if kind == "SymInt":
        return 3
    if kind == "float":
        return 0.5
    if kind == "bool":
        return False
    if kind in ("List[int]", "List[SymInt]"):
        return {"size": [3, 4], "shape": [3, 4], "normalized_shape": [4]}.get(name, [1])
    if kind in ("Device", "Optional[Device]"):
        return DEVICE
    if kind.startswith("Optional["):
        return None
    if kind == "int" and name == "dtype":
        return torch.float32
    raise TypeError(f"no schema value for {name}: {kind}")


def _schema_cases(spec: OpSpec) -> list[Case]:
    """Floating-point values first, integers for ops that take integers only (bitwise_*)."""
    schema = spec.overload._schema
    for integral in (False, True):
        args, kwargs = [], {}
        try:
            for arg in schema.arguments:
                needed = not arg.has_default_value() or arg.is_out or str(arg.type) in ("Optional[Device]",)
                if not needed:
                    continue
                value = _schema_value(arg, integral)
                if arg.kwarg_only:
                    kwargs[arg.name] = value
                else:
                    args.append(value)
            reached(spec.overload, tuple(args), kwargs)
        except Exception:
            continue
        label = "schema:int" if integral else "schema"
        return [Case(spec, label, spec.overload, tuple(args), kwargs, tags=_tags(tuple(args), kwargs))]
    return []


# ---- source 1: the explicit table -----------------------------------------------


def _rand(*sizes, seed=0) -> torch.Tensor:
    return torch.randn(*sizes, generator=torch.Generator().manual_seed(seed))


SPECIAL_OPS = ("_copy_from", "_copy_from_and_resize", "fill_.Tensor", "index.Tensor", "index_put_", "_index_put_impl_", "multinomial",
               "bernoulli_.Tensor", "embedding_dense_backward", "random_.from", "nll_loss_forward",
               "nll_loss_backward", "native_layer_norm_backward", "native_group_norm_backward",
               "uniform_", "normal_", "bernoulli_.float", "random_.to", "random_", "native_dropout",
               "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_",
               "_foreach_div_.ScalarList", "_foreach_addcdiv_.ScalarList",
               "isin.Tensor_Scalar_out", "isin.Scalar_Tensor_out", "nonzero", "nonzero.out",
               "clamp", "clamp_", "clamp.out",
               "_scaled_dot_product_fused_attention_overrideable",
               "_scaled_dot_product_fused_attention_overrideable_backward",
               "_thnn_fused_lstm_cell", "_thnn_fused_lstm_cell_backward_impl",
               "_thnn_fused_gru_cell", "_thnn_fused_gru_cell_backward", "_fused_adamw_", "_fused_adam_",
               "_fused_adamw_.tensor_lr", "_fused_adam_.tensor_lr", "_unique2", "_transformer_encoder_layer_fwd")


# The fused RNN cells have no CPU kernel: their references are the cells'
# arithmetic on the CPU, differentiated by autograd for the backwards. The
# workspaces are the flagos kernels' own layout (csrc/handwritten/rnn_cells.cc).
def _lstm_ref(ig, hg, cx, ib=None, hb=None):
    gates = ig + hg + (ib if ib is not None else 0) + (hb if hb is not None else 0)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, torch.cat([i, f, g, o], 1)


def _lstm_backward_ref(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    # Recover the pre-activation gates from the workspace, then differentiate.
    i, f, g, o = workspace.chunk(4, 1)
    pre = torch.cat([torch.logit(i), torch.logit(f), torch.atanh(g), torch.logit(o)], 1).requires_grad_()
    c = cx.clone().requires_grad_()
    hy, cy2, _ = _lstm_ref(pre, torch.zeros_like(pre), c)
    grad_gates, grad_cx = torch.autograd.grad((hy, cy2), (pre, c), (grad_hy, grad_cy))
    return grad_gates, grad_cx, grad_gates.sum(0) if has_bias else None


def _gru_ref(ig, hg, hx, ib=None, hb=None):
    ig = ig + (ib if ib is not None else 0)
    hg = hg + (hb if hb is not None else 0)
    (ir, iz, in_), (hr, hz, hn) = ig.chunk(3, 1), hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n), torch.cat([r, z, n, hx, hn], 1)


def _gru_backward_ref(grad_hy, workspace, has_bias):
    r, z, n, hx, hn = workspace.chunk(5, 1)
    # Pre-activation gates that reproduce the workspace: input r, z parts carry
    # the logits (hidden r, z parts zero), input n carries atanh(n) - r * hn.
    ig = torch.cat([torch.logit(r), torch.logit(z), torch.atanh(n) - r * hn], 1).requires_grad_()
    hg = torch.cat([torch.zeros_like(r), torch.zeros_like(z), hn], 1).requires_grad_()
    h = hx.clone().requires_grad_()
    hy, _ = _gru_ref(ig, hg, h)
    gi, gh, gx = torch.autograd.grad(hy, (ig, hg, h), grad_hy)
    return gi, gh, gx, (gi.sum(0) if has_bias else None), (gh.sum(0) if has_bias else None)


# The PrivateUse1 SDPA hooks have no CPU kernel: the CPU reference is ATen's
# CPU flash attention, which returns (out, logsumexp); the other results of the
# hook are empty (no nested inputs, no debug mask) but the philox seed and
# offset, 0-dim int64 zeros (no dropout) as its meta function promises.
def _sdpa_hook(q, k, v, mask=None, is_causal=False):
    return torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v, mask, is_causal=is_causal)


def _sdpa_hook_ref(q, k, v, mask=None, is_causal=False):
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=is_causal, attn_mask=mask)
    no_dropout = torch.zeros((), dtype=torch.long)
    return (out, lse, None, None, q.shape[2], k.shape[2], no_dropout, no_dropout, None)


# The backward hook is what autograd calls for the fused forward; the case runs
# both and returns the gradients (the CPU runs its own attention's backward).
def _sdpa_grads(q, k, v, mask=None, is_causal=False):
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out = torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=mask, is_causal=is_causal)
    return torch.autograd.grad((out * out).sum(), leaves)


def _special(spec: OpSpec) -> list[Case] | None:
    if spec.op in IMAGE_OPS:
        return _image_cases(spec)
    if spec.op in CNN_OPS:
        return _cnn_cases(spec)
    if spec.op not in SPECIAL_OPS:
        return None
    aten = torch.ops.aten
    x, y = _rand(3, 4, seed=1), _rand(3, 4, seed=2)
    table = {
        # Backend-only ops: the CPU has no kernel for them; the reference is copy_.
        "_copy_from": [Case(spec, "copy", lambda s, d: aten._copy_from(s, d), (x, y.clone()),
                            ref=lambda s, d: d.copy_(s), tags=("plain",)),
                       Case(spec, "copy broadcast", lambda s, d: aten._copy_from(s, d), (_rand(4), y.clone()),
                            ref=lambda s, d: d.copy_(s), tags=("broadcast",))],
        "_copy_from_and_resize": [Case(spec, "copy resize", lambda s, d: aten._copy_from_and_resize(s, d),
                                       (x, Out(torch.float32)), ref=lambda s, d: d.resize_(s.shape).copy_(s),
                                       tags=("plain",))],
        # fill_ with a 0-dim tensor value: on the device, and on the CPU (no-check policy).
        "fill_.Tensor": [Case(spec, "device value", lambda t, v: t.fill_(v), (x, torch.tensor(2.5)), tags=("plain",)),
                         Case(spec, "cpu value", lambda t, v: t.fill_(v), (x, Cpu(torch.tensor(2.5))),
                              tags=("0-dim",))],
        # Indexing with integer and boolean index tensors on the device.
        "index.Tensor": [Case(spec, "int index", lambda t, i: aten.index.Tensor(t, [i]),
                              (x, torch.tensor([2, 0, 2])), tags=("plain",)),
                         Case(spec, "bool index", lambda t, i: aten.index.Tensor(t, [i]),
                              (x, torch.tensor([True, False, True])), tags=("broadcast",))],
        "index_put_": [Case(spec, "int index", lambda t, i, v: aten.index_put_(t, [i], v),
                            (x, torch.tensor([2, 0]), _rand(2, 4, seed=3)), tags=("plain",)),
                       Case(spec, "accumulate", lambda t, i, v: aten.index_put_(t, [i], v, True),
                            (x, torch.tensor([1, 1]), _rand(4, seed=4)), tags=("broadcast",))],
        # What index's backward calls: accumulate, unsafe (no bounds check).
        "_index_put_impl_": [Case(spec, "accumulate unsafe",
                                  lambda t, i, v: aten._index_put_impl_(t, [i], v, True, True),
                                  (x, torch.tensor([1, 1, 0]), _rand(3, 4, seed=5)), tags=("plain",))],
        # Random: probabilities of 0 and 1 make the draw deterministic.
        "multinomial": [Case(spec, "one-hot rows", lambda p: torch.multinomial(p, 1),
                             (torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]),), tags=("plain",)),
                        Case(spec, "one-hot, with replacement", lambda p: torch.multinomial(p, 4, replacement=True),
                             (torch.tensor([0.0, 0.0, 0.5]),), tags=("plain",))],
        "bernoulli_.Tensor": [Case(spec, "p in {0, 1}", lambda t, p: t.bernoulli_(p),
                                   (x, torch.tensor([[0.0, 1.0, 1.0, 0.0]] * 3)), tags=("plain",)),
                              Case(spec, "p broadcast", lambda t, p: t.bernoulli_(p),
                                   (x, torch.tensor([1.0, 0.0, 1.0, 1.0])), tags=("broadcast",))],
        # Indices into the rows of the weight, with a padding row.
        "embedding_dense_backward": [Case(spec, "indices", lambda g, i: aten.embedding_dense_backward(g, i, 5, -1, False),
                                          (_rand(3, 4, seed=5), torch.tensor([0, 2, 2])), tags=("plain",)),
                                     Case(spec, "padding", lambda g, i: aten.embedding_dense_backward(g, i, 5, 2, False),
                                          (_rand(2, 2, 4, seed=6), torch.tensor([[0, 2], [4, 2]])),
                                          tags=("broadcast",))],
        # Random: a range of one value (or a certain event) makes the draw deterministic.
        "random_.from": [Case(spec, "range of one", lambda t: t.random_(3, 4), (x,), tags=("plain",))],
        "random_.to": [Case(spec, "range of one", lambda t: t.random_(1), (x,), tags=("plain",))],
        "uniform_": [Case(spec, "range of one", lambda t: t.uniform_(2.0, 2.0), (x,), tags=("plain",))],
        "normal_": [Case(spec, "std 0", lambda t: t.normal_(1.5, 0.0), (x,), tags=("plain",))],
        "bernoulli_.float": [Case(spec, "p 1", lambda t: t.bernoulli_(1.0), (x,), tags=("plain",)),
                             Case(spec, "p 0", lambda t: t.bernoulli_(0.0), (y,), tags=("plain",))],
        # Dropout with p = 0 keeps everything, with p = 1 drops everything: no draw to match.
        "native_dropout": [Case(spec, "p 0", lambda t: torch.ops.aten.native_dropout(t, 0.0, True), (x,),
                                tags=("plain",)),
                           Case(spec, "p 1", lambda t: torch.ops.aten.native_dropout(t, 1.0, True), (y,),
                                tags=("plain",))],
        # random_() draws integers in [0, 2**24] for float32: checked, not compared.
        "random_": [Case(spec, "integers", lambda t: t.random_(), (x,), tags=("plain",),
                         check=lambda r: bool(((r == r.floor()) & (r >= 0) & (r <= 2**24)).all()))],
        # nll_loss (mean reduction) forward and backward, with and without class weights.
        "nll_loss_forward": [Case(spec, "mean", lambda s, t: aten.nll_loss_forward(s, t, None, 1, -100),
                                  (_rand(3, 5, seed=7).log_softmax(1), torch.tensor([1, 0, 4])), tags=("plain",)),
                             Case(spec, "weight", lambda s, t, w: aten.nll_loss_forward(s, t, w, 1, -100),
                                  (_rand(3, 5, seed=7).log_softmax(1), torch.tensor([1, 0, 4]),
                                   torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0])), tags=("broadcast",))],
        "nll_loss_backward": [Case(spec, "mean", lambda g, s, t, n: aten.nll_loss_backward(g, s, t, None, 1, -100, n),
                                   (torch.tensor(1.0), _rand(3, 5, seed=7).log_softmax(1), torch.tensor([1, 0, 4]),
                                    torch.tensor(3.0)), tags=("plain",))],
        # Norm backwards, with the saved statistics of the forward on the same input.
        "native_layer_norm_backward": [Case(
            spec, "weight and bias",
            lambda g, i, m, r, w, b: aten.native_layer_norm_backward(g, i, [4], m, r, w, b, [True, True, True]),
            (_rand(3, 4, seed=8), x, *aten.native_layer_norm(x, [4], _rand(4, seed=9), _rand(4, seed=10), 1e-5)[1:],
             _rand(4, seed=9), _rand(4, seed=10)), tags=("plain",))],
        "native_group_norm_backward": [Case(
            spec, "2 groups",
            lambda g, i, m, r, w: aten.native_group_norm_backward(g, i, m, r, w, 2, 4, 3, 2, [True, True, True]),
            (_rand(2, 4, 3, seed=11), _rand(2, 4, 3, seed=12),
             *aten.native_group_norm(_rand(2, 4, 3, seed=12), _rand(4, seed=13), None, 2, 4, 3, 2, 1e-5)[1:],
             _rand(4, seed=13)), tags=("plain",))],
    }
    ints = torch.tensor([[1, 3, 5], [3, 0, 2]])
    # clamp with Scalar? bounds (OpInfo's samples give tensor bounds), 0-dim included
    # (clip_grad_norm_ clamps a 0-dim coefficient).
    table["clamp"] = [Case(spec, "min and max", lambda t: torch.clamp(t, -0.5, 0.5), (x,), tags=("plain",)),
                      Case(spec, "max only", lambda t: torch.clamp(t, max=0.2), (y,), tags=("plain",)),
                      Case(spec, "0-dim", lambda t: torch.clamp(t, max=1.0), (torch.tensor(1.5),), tags=("0-dim",))]
    table["clamp_"] = [Case(spec, "min only", lambda t: t.clamp_(min=-0.3), (x,), tags=("plain",))]
    table["clamp.out"] = [Case(spec, "out", lambda t, o: torch.clamp(t, min=-0.2, max=0.3, out=o),
                               (x, Out(torch.float32)), tags=("plain",))]
    table["isin.Tensor_Scalar_out"] = [Case(spec, "out", lambda e, o: torch.isin(e, 3, out=o), (ints, Out(torch.bool)),
                                            tags=("plain",))]
    table["isin.Scalar_Tensor_out"] = [Case(spec, "out", lambda t, o: torch.isin(3, t, out=o), (ints, Out(torch.bool)),
                                            tags=("plain",))]
    # nonzero through the op itself: torch.nonzero's Python binding makes self's device
    # current around the call, which would hide the kernel's own guard from the
    # negative control.
    table["nonzero"] = [Case(spec, "float", lambda t: aten.nonzero(t), (x.round(),), tags=("plain",)),
                        Case(spec, "bool", lambda t: aten.nonzero(t), (x > 0,), tags=("plain",)),
                        Case(spec, "3-d int", lambda t: aten.nonzero(t), (ints.reshape(2, 3, 1) % 2,), tags=("plain",)),
                        Case(spec, "0-dim", lambda t: aten.nonzero(t), (torch.tensor(2.0),), tags=("0-dim",))]
    table["nonzero.out"] = [Case(spec, "out", lambda t, o: aten.nonzero.out(t, out=o), (x.round(), Out(torch.int64)),
                                 tags=("plain",))]
    # GradScaler's two ops: unscale the grads (one of them holds an inf), then update the scale.
    grads_inf = _rand(3, 4, seed=18)
    grads_inf[1, 2] = float("inf")
    table["_amp_foreach_non_finite_check_and_unscale_"] = [
        Case(spec, "finite", lambda a, b, f, s: aten._amp_foreach_non_finite_check_and_unscale_([a, b], f, s),
             (x, y, torch.zeros(1), torch.tensor([0.25])), tags=("plain",)),
        Case(spec, "an inf", lambda a, b, f, s: aten._amp_foreach_non_finite_check_and_unscale_([a, b], f, s),
             (x, grads_inf, torch.zeros(1), torch.tensor([0.25])), tags=("plain",))]
    # AdamW's bias correction and step: one value per tensor (the same values take the
    # fused operator; different ones a launch per tensor).
    divisors = _rand(3, 4, seed=19).abs() + 0.5
    table["_foreach_div_.ScalarList"] = [
        Case(spec, "same values", lambda a, b: aten._foreach_div_([a, b], [2.0, 2.0]), (x, y), tags=("plain",)),
        Case(spec, "different values", lambda a, b: aten._foreach_div_([a, b], [2.0, -4.0]), (x, y), tags=("plain",))]
    table["_foreach_addcdiv_.ScalarList"] = [
        Case(spec, "two tensors", lambda a, b, n1, n2, d1, d2: aten._foreach_addcdiv_([a, b], [n1, n2], [d1, d2], [0.5, -0.25]),
             (x, y, _rand(3, 4, seed=20), _rand(3, 4, seed=21), divisors, divisors + 1), tags=("plain",))]
    table["_amp_update_scale_"] = [
        Case(spec, "grow", lambda s, g, f: aten._amp_update_scale_(s, g, f, 2.0, 0.5, 1),
             (torch.tensor([4.0]), torch.tensor([0], dtype=torch.int32), torch.zeros(1)), tags=("plain",)),
        Case(spec, "back off", lambda s, g, f: aten._amp_update_scale_(s, g, f, 2.0, 0.5, 1),
             (torch.tensor([4.0]), torch.tensor([3], dtype=torch.int32), torch.ones(1)), tags=("plain",))]
    q, k, v, bias = _rand(2, 2, 3, 4, seed=14), _rand(2, 2, 5, 4, seed=15), _rand(2, 2, 5, 4, seed=16), _rand(3, 5, seed=17)
    table["_scaled_dot_product_fused_attention_overrideable"] = [
        Case(spec, "plain", _sdpa_hook, (q, k, v), ref=_sdpa_hook_ref, tags=("plain",)),
        Case(spec, "additive mask", _sdpa_hook, (q, k, v, bias), ref=_sdpa_hook_ref, tags=("broadcast",)),
        Case(spec, "causal", _sdpa_hook, (q, k, v), {"is_causal": True}, ref=_sdpa_hook_ref, tags=("plain",))]
    table["_scaled_dot_product_fused_attention_overrideable_backward"] = [
        Case(spec, "plain", _sdpa_grads, (q, k, v), tags=("plain",)),
        Case(spec, "additive mask", _sdpa_grads, (q, k, v, bias), tags=("broadcast",)),
        Case(spec, "causal", _sdpa_grads, (q, k, v), {"is_causal": True}, tags=("plain",))]
    ig, hg, cx, b1, b2 = _rand(3, 8, seed=5), _rand(3, 8, seed=6), _rand(3, 2, seed=7), _rand(8, seed=8), _rand(8, seed=9)
    table["_thnn_fused_lstm_cell"] = [
        Case(spec, "biases", lambda *a: aten._thnn_fused_lstm_cell(*a), (ig, hg, cx, b1, b2), ref=_lstm_ref,
             tags=("plain",)),
        Case(spec, "no bias", lambda *a: aten._thnn_fused_lstm_cell(*a), (ig, hg, cx), ref=_lstm_ref,
             tags=("plain",))]
    hy, cy, workspace = _lstm_ref(ig, hg, cx, b1, b2)
    table["_thnn_fused_lstm_cell_backward_impl"] = [
        Case(spec, "both grads", lambda *a: aten._thnn_fused_lstm_cell_backward_impl(*a),
             (_rand(3, 2, seed=10), _rand(3, 2, seed=11), cx, cy, workspace, True), ref=_lstm_backward_ref,
             tags=("plain",))]
    gig, ghg, hx = _rand(3, 6, seed=12), _rand(3, 6, seed=13), _rand(3, 2, seed=14)
    g1, g2 = _rand(6, seed=15), _rand(6, seed=16)
    table["_thnn_fused_gru_cell"] = [
        Case(spec, "biases", lambda *a: aten._thnn_fused_gru_cell(*a), (gig, ghg, hx, g1, g2), ref=_gru_ref,
             tags=("plain",))]
    _, gru_workspace = _gru_ref(gig, ghg, hx, g1, g2)
    table["_thnn_fused_gru_cell_backward"] = [
        Case(spec, "bias", lambda *a: aten._thnn_fused_gru_cell_backward(*a),
             (_rand(3, 2, seed=17), gru_workspace, True), ref=_gru_backward_ref, tags=("plain",))]
    # torch.optim's fused Adam steps on one parameter (amsgrad adds a state); the step count is
    # a 0-dim tensor, as the optimizer keeps it.
    p, g, m, v = _rand(3, 4, seed=19), _rand(3, 4, seed=20), _rand(3, 4, seed=21) * 0.1, _rand(3, 4, seed=22).abs()
    adam = dict(lr=1e-2, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, maximize=False)
    for name in ("_fused_adamw_", "_fused_adam_"):
        table[name] = [
            Case(spec, "plain", lambda p, g, m, v, s, op=getattr(aten, name): op([p], [g], [m], [v], [], [s],
                                                                                  amsgrad=False, **adam),
                 (p, g, m, v, torch.tensor(2.0)), tags=("plain",)),
            Case(spec, "amsgrad", lambda p, g, m, v, mx, s, op=getattr(aten, name): op([p], [g], [m], [v], [mx], [s],
                                                                                        amsgrad=True, **adam),
                 (p, g, m, v, v + 0.5, torch.tensor(2.0)), tags=("plain",))]
    # The .tensor_lr overloads: lr a 0-dim tensor on the case's device.
    for name in ("_fused_adamw_", "_fused_adam_"):
        table[name + ".tensor_lr"] = [
            Case(spec, "tensor lr", lambda p, g, m, v, s, lr, op=getattr(aten, name).tensor_lr: op(
                [p], [g], [m], [v], [], [s], lr=lr, amsgrad=False, **{k: a for k, a in adam.items() if k != "lr"}),
                 (p, g, m, v, torch.tensor(2.0), torch.tensor(adam["lr"])), tags=("plain",))]
    # nn.TransformerEncoderLayer's fast path: embed 4, 2 heads, feed-forward 6, a key-padding mask.
    embed, ffn = 4, 6
    layer = [_rand(3 * embed, embed, seed=23) * 0.3, _rand(3 * embed, seed=24), _rand(embed, embed, seed=25) * 0.3,
             _rand(embed, seed=26), _rand(embed, seed=27), _rand(embed, seed=28), _rand(embed, seed=29),
             _rand(embed, seed=30), _rand(ffn, embed, seed=31) * 0.3, _rand(ffn, seed=32),
             _rand(embed, ffn, seed=33) * 0.3, _rand(embed, seed=34)]
    padding = torch.tensor([[False, False, True], [False, False, False]])
    table["_transformer_encoder_layer_fwd"] = [
        Case(spec, "key padding", lambda src, *w: aten._transformer_encoder_layer_fwd(
            src, embed, 2, *w[:4], True, False, 1e-5, *w[4:12], w[12], 1), (_rand(2, 3, embed, seed=35), *layer, padding),
             tags=("plain",))]
    # unique with the inverse and the counts (without them, an output is empty and the
    # negative control would have no non-empty sample).
    table["_unique2"] = [Case(spec, "inverse and counts", lambda t: aten._unique2(t, True, True, True), (ints,),
                              tags=("plain",))]
    assert set(table) == set(SPECIAL_OPS)
    return table[spec.op]


# ---- source 1b: convolution, upsampling and padding ----------------------------------

# No OpInfo is named after these overloads (F.conv2d, F.interpolate and F.pad
# reach them through composites), and the CPU has no convolution_overrideable:
# its reference is at::convolution.
IMAGE_OPS = ("convolution_overrideable", "convolution_backward_overrideable",
             "upsample_nearest2d", "upsample_nearest2d_backward", "upsample_nearest3d", "upsample_nearest3d_backward",
             "_upsample_nearest_exact2d", "_upsample_nearest_exact2d_backward", "_upsample_nearest_exact3d",
             "_upsample_nearest_exact3d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
             "upsample_bicubic2d", "upsample_bicubic2d_backward", "upsample_trilinear3d", "upsample_trilinear3d_backward",
             "reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d", "replication_pad2d",
             "replication_pad3d", "reflection_pad1d_backward", "reflection_pad2d_backward",
             "reflection_pad3d_backward", "replication_pad1d_backward", "replication_pad2d_backward",
             "replication_pad3d_backward")


def _conv_cases(spec: OpSpec) -> list[Case]:
    aten = torch.ops.aten
    # (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    grouped = (_rand(2, 4, 5, 5, seed=20), _rand(6, 2, 3, 3, seed=21), _rand(6, seed=22),
               [2, 1], [1, 1], [1, 1], False, [0, 0], 2)
    transposed = (_rand(1, 2, 3, 4, 4, seed=23), _rand(2, 3, 2, 2, 2, seed=24), None,
                  [1, 2, 2], [0, 1, 0], [1, 1, 2], True, [0, 1, 1], 1)
    if spec.op == "convolution_overrideable":
        return [Case(spec, label, lambda i, w, b, *rest: aten.convolution_overrideable(i, w, b, *rest), args,
                     ref=lambda i, w, b, *rest: aten.convolution(i, w, b, *rest), tags=("plain",))
                for label, args in (("grouped strided padded", grouped), ("transposed 3-d dilated", transposed))]
    cases = []
    for label, args, mask in (("grouped strided padded", grouped, [True, True, True]),
                              ("transposed 3-d dilated", transposed, [True, False, True])):
        i, w, b, *rest = args
        grad = _rand(*aten.convolution(i, w, b, *rest).shape, seed=25)
        channels = [w.shape[1] * rest[-1] if rest[3] else w.shape[0]]
        cases.append(Case(spec, label,
                          lambda g, i, w, rest=rest, mask=mask: aten.convolution_backward_overrideable(
                              g, i, w, *rest, mask),
                          (grad, i, w),
                          ref=lambda g, i, w, rest=rest, mask=mask, channels=channels: aten.convolution_backward(
                              g, i, w, channels, *rest, mask),
                          tags=("plain",)))
    return cases


def _upsample_cases(spec: OpSpec) -> list[Case]:
    aten = torch.ops.aten
    op = getattr(aten, spec.op.removesuffix("_backward")).default
    three = "3d" in spec.op
    linear = "linear" in spec.op or "cubic" in spec.op  # those take align_corners
    x = _rand(1, 2, 3, 4, 5, seed=30) if three else _rand(2, 3, 4, 5, seed=30)
    # (label, output_size, align_corners, scales): by size, and by scale factors as F.interpolate passes them.
    if three:
        variants = [("size", [5, 7, 6], False, [None, None, None]), ("scales", [6, 6, 10], True, [2.0, 1.5, 2.0])]
    else:
        variants = [("size", [8, 7], False, [None, None]), ("scales", [6, 10], True, [1.5, 2.0])]
    cases = []
    for label, size, align, scales in variants:
        extra = [align] if linear else []
        if spec.op.endswith("_backward"):
            grad = _rand(*x.shape[:2], *size, seed=31)
            cases.append(Case(spec, label, lambda g, size=size, extra=extra, scales=scales: getattr(
                aten, spec.op).default(g, size, list(x.shape), *extra, *scales), (grad,), tags=("plain",)))
        else:
            cases.append(Case(spec, label, lambda t, size=size, extra=extra, scales=scales: op(t, size, *extra, *scales),
                              (x,), tags=("plain",)))
    return cases


def _pad_cases(spec: OpSpec) -> list[Case]:
    aten = torch.ops.aten
    k = int(spec.op.split("_pad")[1][0])
    reflect = spec.op.startswith("reflection")
    # (label, input, padding): batched, unbatched with a negative (cutting) padding, and
    # for replication a padding beyond the dim (which runs in steps on CANN).
    shapes = {1: ((2, 3, 6), (3, 6)), 2: ((2, 3, 4, 5), (3, 4, 5)), 3: ((1, 2, 3, 4, 5), (2, 3, 4, 5))}[k]
    plain = {1: [2, 3], 2: [1, 2, 3, 0], 3: [1, 2, 0, 3, 2, 1]}[k]
    cutting = {1: [-1, 2], 2: [-1, 2, 1, -2], 3: [1, -1, 0, 2, -1, 1]}[k]
    variants = [("batched", _rand(*shapes[0], seed=40), plain), ("negative", _rand(*shapes[1], seed=41), cutting)]
    if not reflect:
        variants.append(("beyond the dim", _rand(*shapes[0], seed=42), {1: [7, 1], 2: [5, 9, 4, 1], 3: [2, 6, 4, 0, 3, 1]}[k]))
    forward = getattr(aten, spec.op.removesuffix("_backward")).default
    cases = []
    for label, x, padding in variants:
        if spec.op.endswith("_backward"):
            grad = _rand(*forward(x, padding).shape, seed=43)
            cases.append(Case(spec, label, lambda g, s, padding=padding: getattr(aten, spec.op).default(g, s, padding),
                              (grad, x), tags=("plain",)))
        else:
            cases.append(Case(spec, label, lambda t, padding=padding: forward(t, padding), (x,), tags=("plain",)))
    return cases


def _image_cases(spec: OpSpec) -> list[Case]:
    if spec.op.startswith("convolution"):
        return _conv_cases(spec)
    if "upsample" in spec.op:
        return _upsample_cases(spec)
    return _pad_cases(spec)


# ---- source 1c: batch norm and max pooling ----------------------------------------

# OpInfo's native_batch_norm samples include evaluation without running
# statistics (an error) and no OpInfo is named after the pooling overloads:
# explicit cases, each with its statistics and indices from the CPU forward.
CNN_OPS = ("native_batch_norm", "native_batch_norm_backward", "_native_batch_norm_legit",
           "_native_batch_norm_legit.no_stats", "_batch_norm_with_update", "batch_norm_backward",
           "max_pool2d_with_indices",
           "max_pool2d_with_indices.out", "max_pool2d_with_indices_backward",
           "max_pool2d_with_indices_backward.grad_input", "avg_pool2d_backward", "avg_pool2d_backward.grad_input")


def _bn_cases(spec: OpSpec) -> list[Case]:
    aten = torch.ops.aten
    x, w, b = _rand(2, 3, 4, 5, seed=50), _rand(3, seed=51), _rand(3, seed=52)
    rm, rv = _rand(3, seed=53), _rand(3, seed=54).abs() + 0.5
    flat = _rand(6, 3, seed=55)
    # (label, input, weight, bias, running_mean, running_var, training)
    variants = [("train with running stats", x, w, b, rm, rv, True),
                ("eval", x, w, b, rm, rv, False),
                ("train 2-d no affine no stats", flat, None, None, None, None, True)]
    if spec.op == "native_batch_norm":
        return [Case(spec, label, lambda i, w, b, m, v, t=t: aten.native_batch_norm(i, w, b, m, v, t, 0.1, 1e-5),
                     (i, w, b, m, v), tags=("plain",))
                for label, i, w, b, m, v, t in variants]
    if spec.op == "_native_batch_norm_legit":
        return [Case(spec, label, lambda i, w, b, m, v, t=t: aten._native_batch_norm_legit(i, w, b, m, v, t, 0.1, 1e-5),
                     (i, w, b, m, v), tags=("plain",))
                for label, i, w, b, m, v, t in variants[:2]]
    if spec.op == "_native_batch_norm_legit.no_stats":
        return [Case(spec, "train", lambda i, w, b: aten._native_batch_norm_legit.no_stats(i, w, b, True, 0.1, 1e-5),
                     (x, w, b), tags=("plain",))]
    if spec.op == "_batch_norm_with_update":
        # Without its `reserve` (empty on the CPU as on flagos), which would make the case "empty".
        return [Case(spec, "train", lambda i, w, b, m, v: aten._batch_norm_with_update(i, w, b, m, v, 0.1, 1e-5)[:3],
                     (x, w, b, rm, rv), tags=("plain",))]
    if spec.op == "batch_norm_backward":
        cases = []
        for label, update in (("update", True), ("no update", False)):
            _, save_mean, save_var, _ = aten._batch_norm_with_update(x, w, b, rm.clone(), rv.clone(), 0.1, 1e-5)
            reserve = torch.zeros(1, dtype=torch.uint8)  # unread; one element keeps the case non-empty
            if not update:
                save_mean, save_var = torch.empty(0), torch.empty(0)
            cases.append(Case(spec, label, lambda g, i, w, m, v, sm, sv, r, u=update: aten.batch_norm_backward(
                g, i, w, m, v, sm, sv, u, 1e-5, [True, True, True], r),
                (_rand(*x.shape, seed=57), x, w, rm, rv, save_mean, save_var, reserve), tags=("plain",)))
        return cases
    cases = []
    for (label, i, w, b, m, v, t), mask in zip(variants, ([True, True, True], [True, True, False], [True, False, False])):
        _, save_mean, save_invstd = aten.native_batch_norm(i, w, b, None if m is None else m.clone(),
                                                           None if v is None else v.clone(), t, 0.1, 1e-5)
        grad = _rand(*i.shape, seed=56)
        cases.append(Case(spec, label, lambda g, i, w, m, v, sm, si, t=t, mask=mask: aten.native_batch_norm_backward(
            g, i, w, m, v, sm, si, t, 1e-5, mask), (grad, i, w, m, v, save_mean, save_invstd), tags=("plain",)))
    return cases


def _pool_cases(spec: OpSpec) -> list[Case]:
    aten = torch.ops.aten
    # (label, input, kernel_size, stride, padding, ceil_mode): batched, and unbatched in ceil mode.
    variants = [("batched padded", _rand(2, 3, 7, 8, seed=60), [3, 3], [2, 2], [1, 1], False),
                ("unbatched ceil", _rand(3, 7, 9, seed=61), [2, 3], [2, 2], [0, 1], True)]
    cases = []
    for label, x, k, st, p, ceil in variants:
        geometry = (k, st, p, [1, 1], ceil)
        if spec.op.startswith("avg_pool2d_backward"):
            avg = (k, st, p, ceil, True, None)
            grad = _rand(*aten.avg_pool2d(x, *avg).shape, seed=63)
            if spec.op == "avg_pool2d_backward":
                cases.append(Case(spec, label, lambda g, t, a=avg: aten.avg_pool2d_backward(g, t, *a), (grad, x),
                                  tags=("plain",)))
            else:
                cases.append(Case(spec, label, lambda g, t, o, a=avg: aten.avg_pool2d_backward.grad_input(
                    g, t, *a, grad_input=o), (grad, x, torch.zeros(2)), tags=("plain",)))
            continue
        if spec.op == "max_pool2d_with_indices":
            cases.append(Case(spec, label, lambda t, g=geometry: aten.max_pool2d_with_indices(t, *g), (x,),
                              tags=("plain",)))
            continue
        if spec.op == "max_pool2d_with_indices.out":
            cases.append(Case(spec, label, lambda t, o, i, g=geometry: aten.max_pool2d_with_indices.out(
                t, *g, out=o, indices=i), (x, torch.zeros(2), torch.zeros(2, dtype=torch.long)), tags=("plain",)))
            continue
        out, indices = aten.max_pool2d_with_indices(x, *geometry)
        grad = _rand(*out.shape, seed=62)
        if spec.op == "max_pool2d_with_indices_backward":
            cases.append(Case(spec, label, lambda g, t, i, geo=geometry: aten.max_pool2d_with_indices_backward(
                g, t, *geo, i), (grad, x, indices), tags=("plain",)))
        else:
            cases.append(Case(spec, label, lambda g, t, i, o, geo=geometry:
                              aten.max_pool2d_with_indices_backward.grad_input(g, t, *geo, i, grad_input=o),
                              (grad, x, indices, torch.zeros(2)), tags=("plain",)))
    return cases


def _cnn_cases(spec: OpSpec) -> list[Case]:
    return _bn_cases(spec) if "batch_norm" in spec.op else _pool_cases(spec)


# ---- picking ----------------------------------------------------------------------

TAG_ORDER = ("plain", "broadcast", "number", "0-dim", "empty")


def _pick(cases: list[Case]) -> list[Case]:
    """A few cases that cover different features; the first is a plain, non-empty one."""
    picked: list[Case] = []
    # A plain sample first, preferring 2-d tensors (they make interesting views).
    plain = [c for c in cases if not c.empty and "0-dim" not in c.tags]
    plain.sort(key=lambda c: -min([t.dim() for t in tensors_in(c.args)] or [0]))
    if plain:
        picked.append(plain[0])
    for tag in TAG_ORDER:
        if len(picked) >= MAX_SAMPLES:
            break
        if any(tag in c.tags for c in picked):
            continue
        for case in cases:
            if tag in case.tags and not any(case is c for c in picked):
                picked.append(case)
                break
    for case in cases:  # top up with the next samples
        if len(picked) >= MAX_SAMPLES:
            break
        if not any(case is c for c in picked):
            picked.append(case)
    return picked


def _with_layouts(cases: list[Case]) -> list[Case]:
    if not cases:
        return cases
    first = cases[0]
    if not any(t.dim() > 0 and t.numel() > 1 for t in tensors_in(first.args)):
        return cases
    views = [dataclasses.replace(first, layout=layout) for layout in ("noncontig", "offset")]
    return [first, *views, *cases[1:]]


@functools.lru_cache(maxsize=None)
def cases_for(op: str) -> tuple[Case, ...]:
    spec = next(s for s in registry_ops() if s.op == op)
    special = _special(spec)
    if special is not None:
        return tuple(_with_layouts(special))
    cases = _opinfo_cases(spec) or _schema_cases(spec)
    return tuple(_with_layouts(_pick(cases)))
