"""Runtime tests of the shape-general ops (reductions, scans,
softmax backward, layer/group norm, addmv/addr), read from the registry.

Each op runs with its tensors on flagos:1 while flagos:0 is current and is
compared with the same ATen overload on the CPU: every output on flagos:1
with CPU's dtype and shape, the current device unchanged, no rejected launch,
no launch on device 0, no CPU fallback. Autograd through layer norm and
softmax on flagos:1 gives the CPU gradients. Negative control: with the
guards off the simulator rejects the same launches.
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

# The ops of these registry files: shape general ops elsewhere bring their own tests.
FILES = ("yaml/ops/reduction_more.yaml", "yaml/ops/norm.yaml", "yaml/ops/linalg.yaml")
GENERAL_OPS = sorted(entry.op for entry in load_registry(Paths(REPO)).ops
                     if entry.shape == "general" and entry.loc.file in FILES)

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 2, reason="needs two flagos devices")

DEVICE = "flagos:1"
CURRENT = 0


def overload(op: str):
    name, _, overload_name = op.partition(".")
    return getattr(getattr(torch.ops.aten, name), overload_name or "default")


def rand(*sizes, dtype=torch.float32, positive=False, seed=0):
    gen = torch.Generator().manual_seed(seed + sum(sizes))
    data = torch.rand(*sizes, generator=gen) + 0.5 if positive else torch.randn(*sizes, generator=gen)
    return data.to(dtype)


def ints(*sizes, low=-4, high=5, dtype=torch.int64):
    gen = torch.Generator().manual_seed(sum(sizes))
    return torch.randint(low, high, sizes, generator=gen).to(dtype)


@dataclass(frozen=True)
class Out:
    """An out= argument: an empty tensor of this dtype, placed like the inputs."""

    dtype: torch.dtype


@dataclass
class Case:
    name: str
    args: tuple
    kwargs: dict = field(default_factory=dict)


FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def _float_cases(make, dtypes=FLOATS):
    return [Case(str(dtype).replace("torch.", ""), *make(dtype)) for dtype in dtypes]


X = rand(3, 4, 5)
LN_X, LN_W, LN_B = rand(2, 3, 4), rand(4, seed=1), rand(4, seed=2)
LN_STATS = torch.ops.aten.native_layer_norm(LN_X, [4], LN_W, LN_B, 1e-5)[1:]
LN_STATS_NOW = torch.ops.aten.native_layer_norm(LN_X, [3, 4], None, None, 1e-5)[1:]
GN_X, GN_W = rand(2, 4, 3), rand(4, seed=1)
GN_STATS = torch.ops.aten.native_group_norm(GN_X, GN_W, None, 2, 4, 3, 2, 1e-5)[1:]


def _cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {
        "sum": _float_cases(lambda d: ((X.to(d),), {})) + [Case("int64", (ints(3, 4),)), Case("bool", (ints(3, 4) > 0,)),
                                                          Case("dtype", (X,), {"dtype": torch.float64})],
        "mean": _float_cases(lambda d: ((X.to(d),), {})),
        "prod": _float_cases(lambda d: ((rand(2, 3, positive=True).to(d),), {})) + [Case("int32", (ints(2, 3, dtype=torch.int32),))],
        "max": _float_cases(lambda d: ((X.to(d),), {})) + [Case("int64", (ints(3, 4),))],
        "min": _float_cases(lambda d: ((X.to(d),), {})) + [Case("int64", (ints(3, 4),))],
        "any": [Case("float32", (X > 1.0,)), Case("int64", (ints(3, 4, low=0, high=2),)), Case("none", (torch.zeros(3),))],
        "all": [Case("bool", (X > -3.0,)), Case("int64", (ints(3, 4, low=0, high=2),)), Case("float32", (X,))],
        "prod.dim_int": _float_cases(lambda d: ((rand(3, 4, positive=True).to(d), 1, False), {}))
        + [Case("keepdim int64", (ints(3, 4), -1, True))],
        "any.dim": [Case("dim 1", (X > 0.5, 1, False)), Case("keepdim", (ints(3, 4, low=0, high=2), 0, True))],
        "any.dims": [Case("dims", (X > 0.5, [0, 2], False)), Case("all dims", (X > 0.5, None, True))],
        "all.dim": [Case("dim 1", (X > -1.0, 1, False)), Case("keepdim", (ints(3, 4, low=0, high=2), 0, True))],
        "all.dims": [Case("dims", (X > -1.0, [0, 2], False)), Case("all dims", (X > -1.0, None, True))],
        "max.dim": _float_cases(lambda d: ((X.to(d), 1, False), {})) + [Case("keepdim int64", (ints(3, 4), -1, True))],
        "min.dim": _float_cases(lambda d: ((X.to(d), 1, False), {})) + [Case("keepdim int64", (ints(3, 4), -1, True))],
        "max.dim_max": [Case("out", (X, 2, False), {"max": Out(torch.float32), "max_values": Out(torch.int64)})],
        "min.dim_min": [Case("out", (X, 0, True), {"min": Out(torch.float32), "min_indices": Out(torch.int64)})],
        "argmax": _float_cases(lambda d: ((X.to(d), 1, False), {}), (torch.float32,))
        + [Case("all elements", (X, None, False)), Case("all elements keepdim", (X, None, True)),
           Case("int64", (ints(3, 4), 0, True))],
        "argmin": [Case("dim", (X, 2, False)), Case("all elements", (X, None, False)),
                   Case("all elements keepdim", (X, None, True)), Case("int64", (ints(3, 4), 1, False))],
        "logsumexp": _float_cases(lambda d: ((X.to(d), [1], False), {})) + [Case("two dims keepdim", (X, [0, 2], True))],
        "linalg_vector_norm": _float_cases(lambda d: ((X.to(d), 2, [1], False), {}))
        + [Case("ord 1 all dims", (X, 1, None, False)), Case("inf keepdim", (X, float("inf"), [0, 2], True))],
        "norm.ScalarOpt_dim": [Case("p 2", (X, 2, [1], False)), Case("p None keepdim", (X, None, [0], True)),
                               Case("p 3 two dims", (X, 3, [0, 2], False))],
        "cumsum": _float_cases(lambda d: ((X.to(d), 1), {})) + [Case("int32", (ints(3, 4, dtype=torch.int32), 0)),
                                                              Case("dtype", (X, -1), {"dtype": torch.float64})],
        "cumsum.out": [Case("out", (X, 2), {"out": Out(torch.float32)})],
        "cumprod": _float_cases(lambda d: ((rand(3, 4, positive=True).to(d), 1), {})) + [Case("int64", (ints(3, 4), 0))],
        "_softmax_backward_data": _float_cases(
            lambda d: ((rand(3, 4, seed=1).to(d), torch.softmax(rand(3, 4), 1).to(d), 1, d), {}), (torch.float32, torch.bfloat16)),
        "_log_softmax_backward_data": _float_cases(
            lambda d: ((rand(3, 4, seed=1).to(d), torch.log_softmax(rand(3, 4), 1).to(d), 1, d), {}), (torch.float32, torch.bfloat16)),
        "native_layer_norm": _float_cases(lambda d: ((rand(2, 3, 4).to(d), [4], rand(4, seed=1).to(d), rand(4, seed=2).to(d), 1e-5), {}))
        + [Case("no weight or bias", (rand(2, 3, 4), [3, 4], None, None, 1e-5)),
           Case("mixed bfloat16 input, float32 weight", (rand(2, 3, 4).bfloat16(), [4], rand(4, seed=1), rand(4, seed=2), 1e-5))],
        "native_group_norm": _float_cases(lambda d: ((rand(2, 4, 3).to(d), rand(4, seed=1).to(d), rand(4, seed=2).to(d), 2, 4, 3, 2, 1e-5), {}),
                                          (torch.float32, torch.bfloat16))
        + [Case("no weight or bias", (rand(2, 6, 2, 2), None, None, 2, 6, 4, 3, 1e-5))],
        "native_layer_norm_backward": [
            Case("all gradients", (rand(2, 3, 4, seed=3), LN_X, [4], *LN_STATS, LN_W, LN_B, [True, True, True])),
            Case("input gradient only, no weight", (rand(2, 3, 4, seed=3), LN_X, [3, 4], *LN_STATS_NOW, None, None,
                                                    [True, False, False])),
            Case("weight gradients only", (rand(2, 3, 4, seed=3), LN_X, [4], *LN_STATS, LN_W, LN_B, [False, True, True])),
        ],
        "native_group_norm_backward": [
            Case("all gradients", (rand(2, 4, 3, seed=3), GN_X, *GN_STATS, GN_W, 2, 4, 3, 2, [True, True, True])),
            Case("input gradient only", (rand(2, 4, 3, seed=3), GN_X, *GN_STATS, None, 2, 4, 3, 2, [True, False, False])),
        ],
        "addmv": [Case("float32", (rand(3), rand(3, 4), rand(4)), {"beta": 0.5, "alpha": 2}),
                  Case("broadcast bias", (rand(1), rand(3, 4), rand(4))), Case("int64", (ints(3), ints(3, 4), ints(4)))],
        "addmv.out": [Case("out", (rand(3), rand(3, 4), rand(4)), {"out": Out(torch.float32)})],
        "addr": [Case("float32", (rand(3, 4), rand(3), rand(4)), {"beta": 0.5, "alpha": 2}),
                 Case("broadcast bias", (rand(4), rand(3), rand(4))), Case("int64", (ints(3, 4), ints(3), ints(4)))],
        "addr.out": [Case("out", (rand(3, 4), rand(3), rand(4)), {"out": Out(torch.float32)})],
        "polar.out": [Case("out", (rand(3, 4, positive=True), rand(3, 4, seed=1)), {"out": Out(torch.complex64)}),
                      Case("broadcast", (rand(3, 4, positive=True), rand(4, seed=1)), {"out": Out(torch.complex64)})],
    }
    return cases


CASES = _cases()


def test_every_general_op_has_cases():
    assert sorted(set(GENERAL_OPS) - set(CASES)) == []


def _place(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device, copy=True)
    if isinstance(value, Out):
        return torch.empty(0, dtype=value.dtype, device=device)
    return value


def _tensors(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _call(op, case: Case, device: str):
    args = tuple(_place(a, device) for a in case.args)
    kwargs = {k: _place(v, device) for k, v in case.kwargs.items()}
    return op(*args, **kwargs)


PARAMS = [pytest.param(op, case, id=f"{op}-{case.name}") for op in GENERAL_OPS for case in CASES.get(op, [])]


@pytest.mark.parametrize("op_name,case", PARAMS)
def test_op_runs_on_its_tensors_device(op_name, case):
    op = overload(op_name)
    expected = _tensors(_call(op, case, "cpu"))

    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    result = _tensors(_call(op, case, DEVICE))
    stats = torch_fl.sim.stats()

    assert torch.flagos.current_device() == CURRENT
    assert stats["rejected_launches"] == 0
    assert stats["launches"].get(CURRENT, 0) == 0, stats["launches"]
    assert stats["launches"].get(1, 0) >= 1
    assert stats["fallback_ops"] == {}, stats["fallback_ops"]
    assert len(result) == len(expected)
    for got, want in zip(result, expected):
        if want is None:  # a gradient output_mask did not ask for
            assert got is None
            continue
        assert got.device == torch.device(DEVICE)
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got.cpu(), want, equal_nan=True)


# ---- autograd ---------------------------------------------------------------


def _grads(device, fn, *inputs):
    leaves = [t.detach().to(device, copy=True).requires_grad_() for t in inputs]
    out = fn(*leaves)
    out.backward(torch.ones_like(out))
    return out, [leaf.grad for leaf in leaves]


AUTOGRAD = {
    "softmax": (lambda x: torch.softmax(x, dim=1) * torch.arange(5.0, device=x.device), (rand(3, 5),),
                "aclnnSoftmaxBackward"),
    "log_softmax": (lambda x: torch.log_softmax(x, dim=-1) * torch.arange(5.0, device=x.device), (rand(3, 5),),
                    "aclnnLogSoftmaxBackward"),
    "group_norm": (lambda x, w, b: torch.nn.functional.group_norm(x, 2, w, b) * torch.arange(3.0, device=x.device),
                   (rand(2, 4, 3), rand(4, seed=1), rand(4, seed=2)), "aclnnGroupNormBackward"),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD))
def test_autograd_on_another_device(name):
    fn, inputs, backward_op = AUTOGRAD[name]
    want_out, want_grads = _grads("cpu", fn, *inputs)
    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    out, grads = _grads(DEVICE, fn, *inputs)
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == CURRENT
    assert stats["rejected_launches"] == 0 and stats["launches"].get(CURRENT, 0) == 0
    assert stats["fallback_ops"] == {}, stats["fallback_ops"]
    assert stats["op_launches"].get(backward_op, 0) >= 1, stats["op_launches"]
    torch.testing.assert_close(out.detach().cpu(), want_out.detach())
    for got, want in zip(grads, want_grads):
        assert got.device == torch.device(DEVICE)
        torch.testing.assert_close(got.cpu(), want)


def test_layer_norm_autograd_on_another_device():
    x, w, b = rand(2, 3, 4), rand(4, seed=1), rand(4, seed=2)
    fn = lambda x, w, b: torch.nn.functional.layer_norm(x, [4], w, b) * torch.arange(4.0, device=x.device)  # noqa: E731
    want_out, want_grads = _grads("cpu", fn, x, w, b)
    torch.flagos.set_device(CURRENT)
    torch_fl.sim.reset_stats()
    out, grads = _grads(DEVICE, fn, x, w, b)
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == CURRENT
    assert stats["rejected_launches"] == 0 and stats["launches"].get(CURRENT, 0) == 0
    assert stats["op_launches"].get("aclnnLayerNorm", 0) == 1
    assert stats["op_launches"].get("aclnnLayerNormBackward", 0) == 1
    assert stats["fallback_ops"] == {}, stats["fallback_ops"]
    torch.testing.assert_close(out.detach().cpu(), want_out.detach())
    for got, want in zip(grads, want_grads):
        assert got.device == torch.device(DEVICE)
        torch.testing.assert_close(got.cpu(), want)


# ---- negative control -------------------------------------------------------


NEGATIVE = ["max.dim", "native_layer_norm", "logsumexp", "cumsum", "addmv", "_softmax_backward_data"]


@pytest.mark.parametrize("op_name", NEGATIVE)
def test_negative_control_guards_off(op_name, unguarded):
    case = CASES[op_name][0]
    torch.flagos.set_device(CURRENT)
    with pytest.raises(RuntimeError, match=r"lives on device 1 but the launch runs on device 0"):
        _call(overload(op_name), case, DEVICE)
    assert torch_fl.sim.stats()["rejected_launches"] >= 1
    assert torch.flagos.current_device() == CURRENT
