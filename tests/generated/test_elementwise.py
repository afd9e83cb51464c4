"""Elementwise math, activations and their backward ops (yaml/ops/unary_math.yaml,
binary_math.yaml, activation_backward.yaml) on inputs that need care:
domains, integer and bool dtypes, float16/bfloat16, rounding, scalar and
tensor operands, in-place and out= forms, and dtype errors.

Each op runs on flagos:1 while flagos:0 is current and is compared with CPU
ATen: same values, same dtype, every launch on device 1 (none on the current
device), no CPU fallback. A negative control turns the guards off: the
simulator must then reject the launch (its tensors are not on the current
device).
"""

from __future__ import annotations

import pytest

import torch

try:
    import torch_fl
except (ImportError, OSError) as error:  # the backend is not built
    pytest.skip(f"torch_fl cannot be imported: {error}", allow_module_level=True)

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 2, reason="needs two flagos devices")

DEVICE = "flagos:1"


def _to(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device, copy=True)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _compare(fn, *args, **kwargs):
    """Runs fn on CPU copies and on flagos:1 copies (current device 0); returns the flagos stats."""
    expected = fn(*_to(args, "cpu"), **_to(kwargs, "cpu"))
    dev_args, dev_kwargs = _to(args, DEVICE), _to(kwargs, DEVICE)
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    actual = fn(*dev_args, **dev_kwargs)
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == 0
    assert actual.device == torch.device(DEVICE)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True)
    assert stats["rejected_launches"] == 0
    assert stats["launches"].get(0, 0) == 0, stats["launches"]
    assert stats["launches"].get(1, 0) >= 1, stats["launches"]
    assert stats["fallback_ops"] == {}, stats["fallback_ops"]
    return stats


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _randn(*sizes, dtype=torch.float32, seed=0):
    return torch.randn(*sizes, generator=_gen(seed)).to(dtype)


def _ints(*sizes, low=-20, high=20, dtype=torch.int64, seed=0):
    return torch.randint(low, high, sizes, generator=_gen(seed)).to(dtype)


# ---- unary: domains, dtypes, in-place and out= ------------------------------------

DOMAIN = torch.tensor([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0, 100.0, float("inf"), float("nan")])


@pytest.mark.parametrize("name", ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "asin", "acos", "atan",
                                  "exp2", "expm1", "tan", "sinh", "cosh", "erf", "erfc", "reciprocal"])
def test_float_functions_over_their_domain(name):
    fn = getattr(torch, name)
    _compare(fn, DOMAIN)
    _compare(lambda x: getattr(x, name + "_")(), DOMAIN)  # in-place
    _compare(lambda x, out: fn(x, out=out), DOMAIN, out=torch.empty(0))  # out=, resized


@pytest.mark.parametrize("name", ["exp2", "log2", "sin", "tanh", "erf", "reciprocal", "sigmoid", "acos"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
def test_float_functions_of_integers_return_the_default_float(name, dtype):
    x = _ints(3, 5, low=0, high=4).to(dtype)
    stats = _compare(getattr(torch, name), x)
    assert torch.flagos.current_device() == 0 and stats["launches"][1] == 1


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("name", ["exp2", "log1p", "asin", "erfc", "floor", "round", "trunc", "sign", "silu"])
def test_reduced_and_double_precision(name, dtype):
    fn = torch.nn.functional.silu if name == "silu" else getattr(torch, name)
    _compare(fn, _randn(4, 6, dtype=dtype).clamp(-0.9, 0.9) * (1 if name in ("asin",) else 3))


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sign", "abs", "neg"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int8])
def test_rounding_and_sign_keep_the_dtype(name, dtype):
    x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7]) if dtype.is_floating_point else _ints(8)
    x = x.to(dtype)
    _compare(getattr(torch, name), x)
    _compare(lambda t: getattr(t, name + "_")(), x)


def test_round_half_to_even_like_aten():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5])
    _compare(torch.round, x)


def test_logical_and_bitwise_not():
    x = _ints(3, 4, low=-2, high=3)
    _compare(torch.logical_not, x)
    _compare(torch.logical_not, x.float())
    _compare(lambda t: t.logical_not_(), x.float())  # keeps float: 0/1
    _compare(lambda t, out: torch.logical_not(t, out=out), x, out=torch.empty(0, dtype=torch.bool))
    for dtype in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool):
        _compare(torch.bitwise_not, x.to(dtype))
        _compare(lambda t: t.bitwise_not_(), x.to(dtype))


def test_non_contiguous_unary():
    x = _randn(6, 4).t()[1:]
    _compare(torch.expm1, x)
    _compare(lambda t: t.erf_(), x)


# ---- dtype errors -------------------------------------------------------------------

def _both_raise(fn, *args, match):
    with pytest.raises(RuntimeError):
        fn(*_to(args, "cpu"))
    with pytest.raises(RuntimeError, match=match):
        fn(*_to(args, DEVICE))
        # Streams are asynchronous: a kernel that fails when it runs (not at
        # aclnn*GetWorkspaceSize) is reported by the next synchronization, as
        # CUDA reports device-side errors.
        torch.flagos.synchronize(DEVICE)


def test_unsupported_dtypes_fail_clearly():
    x = _randn(3)
    i = _ints(3)
    _both_raise(torch.bitwise_and, x, x, match="aclnnBitwiseAndTensor: argument 'self' has dtype ACL_FLOAT")
    _both_raise(lambda a: torch.bitwise_not(a), x, match="aclnnBitwiseNot")
    # aclnnFloor takes no bool: the call runs on the CPU (the per-dtype fallback), which
    # refuses it as it does on the CPU; strict mode shows the operator's own verdict.
    _both_raise(lambda a: torch.floor(a), i.bool(), match="not implemented for 'Bool'")
    strict = torch_fl._C._strict()
    torch_fl._C._set_strict(True)
    try:
        _both_raise(lambda a: torch.floor(a), i.bool(), match="aclnnFloor: argument 'self' has dtype ACL_BOOL")
    finally:
        torch_fl._C._set_strict(strict)
    _both_raise(lambda a: torch.nn.functional.silu(a), i, match="aclnnSilu: argument 'self' has dtype ACL_INT64")
    # A float result cannot be written into an integer tensor, in place or out=:
    # ATen's meta function says so at the call, before any launch.
    _both_raise(lambda a: a.exp2_(), i, match="can't be cast to the desired output type Long")
    _both_raise(lambda a: a.exp_(), i, match="can't be cast to the desired output type Long")
    _both_raise(lambda a: torch.log2(a, out=torch.empty(0, dtype=torch.int64, device=a.device)), x,
                match="can't be cast to the desired output type Long")
    _both_raise(lambda a: a.fmod_(torch.full((3,), 2.5, device=a.device)), i, match="can't be cast")
    # An in-place result must keep self's shape.
    _both_raise(lambda a: a.fmod_(torch.ones(2, 3, device=a.device)), x,
                match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]")
    assert torch.flagos.current_device() == 0


# ---- binary: tensor and scalar operands ---------------------------------------------

@pytest.mark.parametrize("name", ["fmod", "remainder"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32])
def test_fmod_remainder_signs(name, dtype):
    x = torch.tensor([-7.5, -3.0, -1.0, 0.0, 2.0, 5.5, 7.0, 9.0]).to(dtype)
    y = torch.tensor([2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 2.5, -2.5]).to(dtype)
    fn = getattr(torch, name)
    _compare(fn, x, y)  # .Tensor
    _compare(fn, x, 3)  # .Scalar
    _compare(lambda a, b: getattr(a, name + "_")(b), x, y)
    _compare(lambda a: getattr(a, name + "_")(-2), x)
    _compare(lambda a, b, out: fn(a, b, out=out), x, y, out=torch.empty(0, dtype=dtype))
    _compare(lambda a, out: fn(a, 3, out=out), x, out=torch.empty(0, dtype=dtype))
    if dtype.is_floating_point:
        _compare(lambda a: fn(a, torch.tensor(2.5)), x)  # a CPU 0-dim tensor: the scalar entry point
        _compare(lambda a: getattr(a, name + "_")(torch.tensor(-1.5)), x)


def test_fmod_of_integers_by_a_float_number_promotes():
    _compare(torch.fmod, _ints(5), 2.5)
    _compare(torch.remainder, _ints(5), -1.5)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool])
def test_bitwise_integer_dtypes(name, dtype):
    x = _ints(3, 4, low=0, high=100, seed=1).to(dtype)
    y = _ints(4, low=0, high=100, seed=2).to(dtype)
    fn = getattr(torch, name)
    scalar = True if dtype == torch.bool else 37
    _compare(fn, x, y)
    _compare(fn, x, scalar)
    _compare(lambda a, b: getattr(a, name + "_")(b), x, y)
    _compare(lambda a: getattr(a, name + "_")(scalar), x)
    _compare(lambda a, b, out: fn(a, b, out=out), x, y, out=torch.empty(0, dtype=dtype))
    _compare(lambda a, out: fn(a, scalar, out=out), x, out=torch.empty(0, dtype=dtype))


def test_bitwise_mixed_integer_dtypes_promote():
    _compare(torch.bitwise_and, _ints(5, dtype=torch.int8), _ints(5, dtype=torch.int32, seed=3))
    _compare(torch.bitwise_xor, _ints(5).bool(), _ints(5, dtype=torch.uint8, low=0, seed=3))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_binary(name):
    x = _ints(3, 4, low=-1, high=2)
    y = _ints(4, low=-1, high=2, seed=5).float()
    fn = getattr(torch, name)
    _compare(fn, x, y)
    _compare(lambda a, b: getattr(a, name + "_")(b), x.float(), y)
    _compare(lambda a, b, out: fn(a, b, out=out), x, y, out=torch.empty(0, dtype=torch.bool))


def test_atan2():
    x, y = _randn(3, 4), _randn(4, seed=1)
    _compare(torch.atan2, x, y)
    _compare(torch.atan2, _ints(3, 4), _ints(4, seed=1))  # integers: float result
    _compare(lambda a, b: a.atan2_(b), x, y)
    _compare(lambda a, b, out: torch.atan2(a, b, out=out), x, y, out=torch.empty(0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64])
def test_pow_forms(dtype):
    base = (_randn(3, 4).abs() + 0.5).to(dtype) if dtype.is_floating_point else _ints(3, 4, low=0, high=5)
    exponent = (_randn(4, seed=1).abs()).to(dtype) if dtype.is_floating_point else _ints(4, low=0, high=4, seed=1)
    _compare(torch.pow, base, exponent)  # pow.Tensor_Tensor
    _compare(torch.pow, 2, exponent)  # pow.Scalar
    _compare(lambda a, b: a.pow_(b), base, exponent)
    _compare(lambda a: a.pow_(2), base)
    _compare(lambda a, b, out: torch.pow(a, b, out=out), base, exponent, out=torch.empty(0, dtype=dtype))
    _compare(lambda a, out: torch.pow(a, 3, out=out), base, out=torch.empty(0, dtype=dtype))
    _compare(lambda b, out: torch.pow(2, b, out=out), exponent, out=torch.empty(0, dtype=dtype))
    _compare(lambda b: 2.5 ** b, exponent)  # a float base on an integer exponent promotes


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32])
def test_clamp_min_max(dtype):
    x = (_randn(3, 4) * 4).to(dtype)
    lo, hi = (_randn(4, seed=1) * 2).to(dtype), (_randn(4, seed=2) * 2 + 1).to(dtype)
    for fn, bound in ((torch.clamp_min, lo), (torch.clamp_max, hi)):
        name = fn.__name__
        _compare(fn, x, 1)
        _compare(fn, x, bound)  # .Tensor
        _compare(lambda a: getattr(a, name + "_")(-1), x)
        _compare(lambda a, b: getattr(a, name + "_")(b), x, bound)
        _compare(lambda a, out: fn(a, 1, out=out), x, out=torch.empty(0, dtype=dtype))
        _compare(lambda a, b, out: fn(a, b, out=out), x, bound, out=torch.empty(0, dtype=dtype))
    if not dtype.is_floating_point:
        _compare(torch.clamp_min, x, 0.5)  # an integer tensor with a float bound: float result


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_lerp_addcmul_addcdiv_on_a_non_current_device(dtype):
    x, end, weight = _randn(3, 4, dtype=dtype), _randn(4, dtype=dtype, seed=1), _randn(3, 4, dtype=dtype, seed=2)
    t1, t2 = _randn(3, 4, dtype=dtype, seed=3), _randn(4, dtype=dtype, seed=4).abs() + 0.5
    _compare(torch.lerp, x, end, 0.3)
    _compare(lambda a, b, out: torch.lerp(a, b, 0.3, out=out), x, end, out=torch.empty(0, dtype=dtype))
    _compare(lambda a, b: a.lerp_(b, 0.75), x, end)
    _compare(lambda a, b, w: a.lerp_(b, w), x, end, weight)
    _compare(lambda a, b, c: a.addcmul_(b, c, value=-0.5), x, t1, t2)
    _compare(lambda a, b, c: a.addcdiv_(b, c, value=2), x, t1, t2)


def test_addcmul_integers_and_addcdiv_rejects_them():
    x, a, b = _ints(3, 4), _ints(3, 4, seed=1), _ints(4, seed=2)
    _compare(lambda s, t1, t2: s.addcmul_(t1, t2, value=3), x, a, b)
    _both_raise(lambda s, t1, t2: s.addcdiv_(t1, t2), x, a, b, match="Integer division with addcdiv is no longer supported")


# ---- activation backward ------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_activation_backward_matches_cpu(dtype):
    grad, x = _randn(3, 4, dtype=dtype), _randn(3, 4, dtype=dtype, seed=1)
    aten = torch.ops.aten
    _compare(aten.silu_backward, grad, x)
    _compare(aten.sigmoid_backward, grad, torch.sigmoid(x))
    _compare(aten.tanh_backward, grad, torch.tanh(x))
    _compare(aten.threshold_backward, grad, x, 0.1)
    _compare(lambda g, s, out: aten.silu_backward.grad_input(g, s, grad_input=out), grad, x,
             out=torch.empty(0, dtype=dtype))
    _compare(lambda g, s, out: aten.threshold_backward.grad_input(g, s, 0.0, grad_input=out), grad, x,
             out=torch.empty(0, dtype=dtype))


def test_autograd_through_activations_on_a_non_current_device():
    x = _randn(5, seed=7)
    for fn in (torch.nn.functional.silu, torch.sigmoid, torch.tanh, torch.relu):
        cpu = x.clone().requires_grad_()
        fn(cpu).sum().backward()
        dev = x.to(DEVICE).requires_grad_()
        torch.flagos.set_device(0)
        fn(dev).sum().backward()
        assert dev.grad.device == torch.device(DEVICE)
        torch.testing.assert_close(dev.grad.cpu(), cpu.grad)
    assert torch_fl.sim.stats()["rejected_launches"] == 0


# ---- negative control -----------------------------------------------------------------

NEGATIVE_CONTROL = {  # (x, y, out) are prepared on flagos:1 before the guards go off
    "exp2": lambda x, y, out: torch.exp2(x),
    "floor_": lambda x, y, out: x.floor_(),
    "log10.out": lambda x, y, out: torch.log10(x, out=out),
    "fmod.Tensor": lambda x, y, out: torch.fmod(x, y),
    "bitwise_and.Scalar_out": lambda x, y, out: torch.bitwise_and(x, 3, out=out),
    "atan2_": lambda x, y, out: x.atan2_(y),
    "clamp_min.Tensor": lambda x, y, out: torch.clamp_min(x, y),
    "pow.Tensor_Tensor": lambda x, y, out: torch.pow(x, y),
    "lerp_.Scalar": lambda x, y, out: x.lerp_(y, 0.5),
    "addcmul_": lambda x, y, out: x.addcmul_(y, y),
    "silu_backward": lambda x, y, out: torch.ops.aten.silu_backward(x, y),
}


@pytest.fixture
def no_device_check():
    """Turns the launch-time sanitizer off so that the simulator itself judges the launch."""
    torch_fl._C._set_device_check(False)
    yield
    torch_fl._C._set_device_check(True)


@pytest.mark.parametrize("op", sorted(NEGATIVE_CONTROL))
def test_without_guards_the_simulator_rejects_the_launch(op, no_device_check):
    """Guards off: the launch runs on the current device 0 with tensors of device 1."""
    fn = NEGATIVE_CONTROL[op]
    x = _randn(3, 4).to(DEVICE)
    if op == "bitwise_and.Scalar_out":
        x = x.int()
    y = _randn(3, 4, seed=1).to(DEVICE)
    out = torch.empty(3, 4, dtype=x.dtype, device=DEVICE)
    x2 = x.clone()
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    fn(x, y, out)  # guarded: runs on device 1
    assert torch_fl.sim.stats()["rejected_launches"] == 0
    torch_fl._C._set_guards_enabled(False)
    with pytest.raises(RuntimeError, match=r"aclnn\w+.*device"):
        fn(x2, y, out)
    assert torch_fl.sim.stats()["rejected_launches"] >= 1
    assert torch.flagos.current_device() == 0
