"""Selection and special values on flagos:2 while flagos:0 is current, against
the CPU: nonzero (csrc/handwritten/nonzero.cc), isin.Tensor_Tensor (isin.cc),
and the generated isin of a number or of one, where, isinf, isnan, isposinf
and isneginf (yaml/ops/selection.yaml; integers through an `alternate:`
launch) on the values that matter (inf, -inf, NaN, Python numbers), and
empty tensors."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected

pytestmark = needs_devices

SPECIAL = torch.tensor([[1.0, float("inf"), -float("inf")], [float("nan"), -0.0, 3.5]])


# ---- nonzero -------------------------------------------------------------------


@pytest.mark.parametrize("x", [
    torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]),
    torch.tensor([[True, False], [False, True]]),
    torch.tensor([0, 3, 0, 0, 7], dtype=torch.int32),
    torch.tensor([float("nan"), 0.0, 1.0]),  # NaN is nonzero
    torch.arange(24.0).reshape(2, 3, 4) % 5,
], ids=["float", "bool", "int32", "nan", "3-d"])
def test_nonzero(x):
    out = torch.nonzero(on_device(x))
    assert_clean(out, ops=["aclnnNonzero", "aclnnReduceSum"])
    assert_equal(out, torch.nonzero(x))


def test_nonzero_non_contiguous_and_views():
    x = torch.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    out = torch.nonzero(on_device(x).t())
    assert_clean(out, ops=["aclnnNonzero"])
    assert_equal(out, torch.nonzero(x.t()))


def test_nonzero_edge_sizes():
    for x in (torch.zeros(3, 4), torch.empty(0, 3), torch.tensor(5.0), torch.tensor(0.0)):
        out = torch.nonzero(on_device(x))
        assert_clean(out)
        assert_equal(out, torch.nonzero(x))
    assert "aclnnNonzero" not in torch_fl.sim.stats()["op_launches"]  # nothing to index in any of them


def test_nonzero_as_tuple_and_where():
    x = torch.tensor([[0.0, 1.0], [2.0, 0.0]])
    dx = on_device(x)
    for got, want in zip(torch.nonzero(dx, as_tuple=True), torch.nonzero(x, as_tuple=True)):
        assert_equal(got, want)
    for got, want in zip(torch.where(dx), torch.where(x)):
        assert_equal(got, want)
    assert_clean(*torch.where(dx))


def test_nonzero_out():
    x = torch.tensor([1.0, 0.0, 2.0])
    out = torch.empty(7, 2, dtype=torch.long, device=DEVICE)
    dx = on_device(x)
    assert torch.nonzero(dx, out=out) is out
    assert_clean(out, ops=["aclnnNonzero"])
    assert_equal(out, torch.nonzero(x))


def test_nonzero_out_errors():
    dx = on_device(torch.tensor([1.0, 0.0]))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.nonzero(dx, out=torch.empty(0, dtype=torch.long))  # a CPU out
    with pytest.raises(RuntimeError, match="Expected out tensor to have scalar type Long"):
        torch.nonzero(dx, out=torch.empty(0, device=DEVICE))


def test_nonzero_executor_is_not_cached():
    """aclnnNonzero's output size depends on the data: CANN refuses to make its
    executor repeatable, so every call runs its phase 1 again (the count's
    aclnnReduceSum is cached)."""
    dx = on_device(torch.tensor([True, False, True]))
    torch.nonzero(dx)
    torch_fl._C._reset_executor_cache_stats()
    dy = on_device(torch.tensor([False, False, True]))
    assert_equal(torch.nonzero(dy), torch.tensor([[2]]))
    stats = torch_fl._C._executor_cache_stats()
    assert (stats["hits"], stats["misses"]) == (1, 1), stats


def test_negative_control_nonzero(unguarded):
    # Through the op itself: torch.nonzero's Python binding makes self's device
    # current around the call (a guard of its own, which would hide the kernel's).
    dx = on_device(torch.tensor([0.0, 1.0, 2.0]))
    with rejected():
        torch.ops.aten.nonzero(dx)


# ---- isin ------------------------------------------------------------------------


@pytest.mark.parametrize("invert", [False, True])
def test_isin_tensor_tensor(invert):
    elements = torch.tensor([[1, 5, 3], [7, 1, 9]])
    test = torch.tensor([1, 9, 4])
    de, dt = on_device(elements, test)
    out = torch.isin(de, dt, invert=invert)
    assert_clean(out, ops=["aclnnNeTensor", "aclnnAll"] if invert else ["aclnnEqTensor", "aclnnAny"])
    assert_equal(out, torch.isin(elements, test, invert=invert))


def test_isin_tensor_tensor_promotes_and_broadcasts_shapes():
    elements = torch.tensor([1.0, 2.5, 3.0])
    test = torch.tensor([[3, 1]])  # int64 test values, 2-D
    de, dt = on_device(elements, test)
    assert_equal(torch.isin(de, dt), torch.isin(elements, test))
    scalar = torch.tensor(2)
    ds = on_device(scalar)
    assert_equal(torch.isin(ds, on_device(torch.tensor([2, 3]))), torch.isin(scalar, torch.tensor([2, 3])))


@pytest.mark.parametrize("invert", [False, True])
def test_isin_empty_test_elements(invert):
    elements = torch.tensor([1, 2, 3])
    de, dt = on_device(elements, torch.tensor([], dtype=torch.long))
    assert_equal(torch.isin(de, dt, invert=invert), torch.isin(elements, torch.tensor([], dtype=torch.long),
                                                              invert=invert))


def test_isin_scalar_forms():
    elements = torch.tensor([[1, 5], [3, 1]])
    de = on_device(elements)
    for invert in (False, True):
        assert_equal(torch.isin(de, 1, invert=invert), torch.isin(elements, 1, invert=invert))
        assert_equal(torch.isin(5, de, invert=invert), torch.isin(5, elements, invert=invert))
        assert_equal(torch.isin(4, de, invert=invert), torch.isin(4, elements, invert=invert))
    stats = torch_fl.sim.stats()["op_launches"]
    assert stats.get("aclnnIsInTensorScalar") == 2 and stats.get("aclnnIsInScalarTensor") == 4, stats
    assert_clean(torch.isin(5, de))


def test_isin_scalar_forms_of_empty_tensors():
    """No element: an empty bool tensor; no test element: the 0-dim answer `invert`, written
    (isin.Scalar_Tensor's meta function sizes its output [0], the wrapper makes it 0-dim)."""
    no_elements = torch.empty(0, 3, dtype=torch.long)
    no_tests = torch.empty(0, dtype=torch.long)
    de, dt = on_device(no_elements, no_tests)
    for invert in (False, True):
        got = [torch.isin(de, 1, invert=invert), torch.isin(5, dt, invert=invert)]
        assert_clean(*got)
        for result, expected in zip(got, [torch.isin(no_elements, 1, invert=invert),
                                          torch.isin(5, no_tests, invert=invert)]):
            assert result.shape == expected.shape
            assert_equal(result, expected)
        out = torch.ones(2, dtype=torch.bool, device=DEVICE)  # resized: ATen warns, as on the CPU
        with pytest.warns(UserWarning, match="was resized"):
            torch.isin(5, dt, invert=invert, out=out)
        assert out.shape == () and out.item() == invert


def test_isin_out_forms():
    elements, test = torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4])
    de, dt = on_device(elements, test)
    for call, ref in [
        (lambda out: torch.isin(de, dt, out=out), lambda: torch.isin(elements, test)),
        (lambda out: torch.isin(de, 3, out=out), lambda: torch.isin(elements, 3)),
        (lambda out: torch.isin(2, dt, out=out), lambda: torch.isin(2, test)),
    ]:
        out = torch.empty(0, dtype=torch.bool, device=DEVICE)
        assert call(out) is out
        assert_equal(out, ref())
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.isin(de, dt, out=torch.empty(0, dtype=torch.bool))


def test_isin_generate_stopping_criterion():
    """transformers' generate asks which of the last tokens are end-of-sequence tokens."""
    tokens = torch.tensor([[3, 7, 2], [0, 2, 2]])
    eos = torch.tensor([2])
    dtok, deos = on_device(tokens, eos)
    done = torch.isin(dtok[:, -1], deos)
    assert_clean(done)
    assert_equal(done, torch.isin(tokens[:, -1], eos))


def test_negative_control_isin(unguarded):
    de, dt = on_device(torch.tensor([1, 2]), torch.tensor([2]))
    with rejected():
        torch.isin(de, dt)


# ---- isposinf / isneginf / isinf / isnan ----------------------------------------------


@pytest.mark.parametrize("fn", [torch.isposinf, torch.isneginf, torch.isinf, torch.isnan],
                         ids=["isposinf", "isneginf", "isinf", "isnan"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_special_values(fn, dtype):
    x = SPECIAL.to(dtype)
    out = fn(on_device(x))
    assert_clean(out)
    assert_equal(out, fn(x))


@pytest.mark.parametrize("fn", [torch.isposinf, torch.isneginf, torch.isinf, torch.isnan],
                         ids=["isposinf", "isneginf", "isinf", "isnan"])
def test_special_values_of_integers_and_bools(fn):
    for x in (torch.tensor([[1, -3], [0, 7]]), torch.tensor([True, False])):
        out = fn(on_device(x))
        assert_clean(out)
        assert_equal(out, fn(x))


def test_infinities_of_integers_launch_no_inf_operator():
    torch.isneginf(on_device(torch.tensor([1, 2])))
    stats = torch_fl.sim.stats()["op_launches"]
    assert "aclnnIsNegInf" not in stats and stats.get("aclnnInplaceZero") == 1


def test_special_values_one_launch_each():
    dx = on_device(SPECIAL)
    for fn, op in [(torch.isposinf, "aclnnIsPosInf"), (torch.isneginf, "aclnnIsNegInf"), (torch.isinf, "aclnnIsInf"),
                   (torch.isnan, "aclnnNeTensor")]:
        torch_fl.sim.reset_stats()
        fn(dx)
        assert torch_fl.sim.stats()["op_launches"] == {op: 1}


def test_infinity_out_forms():
    dx = on_device(SPECIAL)
    for fn in (torch.isposinf, torch.isneginf):
        out = torch.empty(0, dtype=torch.bool, device=DEVICE)
        assert fn(dx, out=out) is out
        assert_equal(out, fn(SPECIAL))
        with pytest.raises(RuntimeError, match="does not support non-boolean outputs"):
            fn(dx, out=torch.empty(0, device=DEVICE))
        with pytest.raises(RuntimeError, match="does not support complex inputs"):
            fn(on_device(torch.tensor([1j])))


def test_negative_control_isneginf(unguarded):
    dx = on_device(SPECIAL)
    with rejected():
        torch.isneginf(dx)


# ---- where --------------------------------------------------------------------------


def test_where_forms():
    cond = torch.tensor([[True, False, True], [False, True, False]])
    x, y = torch.randn(2, 3), torch.randn(3)
    dc, dx, dy = on_device(cond, x, y)
    checks = [
        (torch.where(dc, dx, dy), torch.where(cond, x, y)),
        (torch.where(dc, dx, 0.5), torch.where(cond, x, 0.5)),  # ScalarOther
        (torch.where(dc, -float("inf"), dx), torch.where(cond, -float("inf"), x)),  # ScalarSelf
        (torch.where(dc, 1.0, 0.0), torch.where(cond, 1.0, 0.0)),  # Scalar
        (dx.where(dc, dy), x.where(cond, y)),
        (torch.where(dc, dx.half(), dy), torch.where(cond, x.half(), y)),  # promotion
        (torch.where(dc, torch.tensor([1, 2, 3], device=DEVICE), 0.5),
         torch.where(cond, torch.tensor([1, 2, 3]), 0.5)),  # a Python float with integers: default float
    ]
    for got, want in checks:
        assert_equal(got, want)
    assert_clean(*(got for got, _ in checks), ops=["aclnnSWhere"])


def test_where_out_and_cpu_number():
    cond = torch.tensor([True, False, True])
    x = torch.randn(3)
    dc, dx = on_device(cond, x)
    out = torch.empty(0, device=DEVICE)
    assert torch.where(dc, dx, torch.tensor(2.0), out=out) is out  # a CPU 0-dim operand
    assert_clean(out, ops=["aclnnSWhere"])
    assert_equal(out, torch.where(cond, x, torch.tensor(2.0)))


def test_negative_control_where(unguarded):
    dc, dx, dy = on_device(torch.tensor([True, False]), torch.randn(2), torch.randn(2))
    with rejected():
        torch.where(dc, dx, dy)
