"""Foreach ops (csrc/handwritten/foreach.cc): one fused launch per (device,
dtype) group, each on its own device; lists may span devices."""

import pytest
import torch
import torch_fl
from hw_util import CURRENT, DEVICE, MISMATCH, assert_clean, assert_equal, needs_devices, on_device, rejected

SPAN = ["flagos:1", "flagos:2", "flagos:3"]  # none of them current


def spread(tensors, devices=SPAN):
    """Copies of `tensors` on `devices` in turn; the counters are zeroed afterwards."""
    moved = [t.to(devices[i % len(devices)]) for i, t in enumerate(tensors)]
    torch_fl.sim.reset_stats()
    return moved


def cpu_list(count, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(i + 2, 3, generator=gen) * 10).to(dtype) for i in range(count)]


def assert_one_launch_per_device(op, devices=SPAN):
    stats = torch_fl.sim.stats()
    indices = {torch.device(d).index for d in devices}
    assert stats["op_launches"] == {op: len(indices)}, stats["op_launches"]
    assert stats["launches"] == {d: int(d in indices) for d in stats["launches"]}, stats["launches"]
    assert stats["rejected_launches"] == 0
    assert stats["fallback_ops"] == {}
    assert torch.flagos.current_device() == CURRENT


def assert_lists(actual, expected, devices=SPAN):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.device == torch.device(devices[i % len(devices)])
        assert_equal(a, e)


pytestmark = needs_devices


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_add_scalar_inplace_spans_three_devices(dtype):
    cpu = cpu_list(6, dtype)
    tensors = spread(cpu)
    torch._foreach_add_(tensors, 3)
    assert_one_launch_per_device("aclnnForeachAddScalarV2")
    assert_lists(tensors, [t + 3 for t in cpu])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_add_list_inplace(dtype):
    cpu, other = cpu_list(6, dtype), cpu_list(6, dtype, seed=1)
    tensors, others = spread(cpu), spread(other)
    torch._foreach_add_(tensors, others, alpha=2)
    assert_one_launch_per_device("aclnnForeachAddListV2")
    assert_lists(tensors, [a + 2 * b for a, b in zip(cpu, other)])


# float32 and bfloat16 lists take the factor as a float32 device tensor (a new
# factor keeps the executor); float16 (CANN would round it to float16) and
# int32 keep the aclScalar.
MUL_SCALAR_OP = {torch.float32: "aclnnForeachMulScalar", torch.bfloat16: "aclnnForeachMulScalar",
                 torch.float16: "aclnnForeachMulScalarV2", torch.int32: "aclnnForeachMulScalarV2"}


@pytest.mark.parametrize("dtype", list(MUL_SCALAR_OP))
def test_mul_scalar_inplace(dtype):
    cpu = cpu_list(5, dtype)
    tensors = spread(cpu)
    factor = 3 if dtype == torch.int32 else 0.3
    torch._foreach_mul_(tensors, factor)
    assert_one_launch_per_device(MUL_SCALAR_OP[dtype])
    assert_lists(tensors, [t * factor for t in cpu])


def test_mul_scalar_inplace_with_a_new_factor_keeps_the_executors():
    tensors = spread(cpu_list(3))
    torch._foreach_mul_(tensors, 0.5)
    before = {d: torch.flagos.executor_cache_stats(d)["misses"] for d in (1, 2, 3)}
    torch._foreach_mul_(tensors, 0.25)
    assert {d: torch.flagos.executor_cache_stats(d)["misses"] for d in (1, 2, 3)} == before
    # Negative control: float16 keeps the aclScalar, a new key for a new factor.
    halves = spread(cpu_list(3, torch.float16))
    torch._foreach_mul_(halves, 0.5)
    before = {d: torch.flagos.executor_cache_stats(d)["misses"] for d in (1, 2, 3)}
    torch._foreach_mul_(halves, 0.25)
    assert {d: torch.flagos.executor_cache_stats(d)["misses"] - before[d] for d in (1, 2, 3)} == {1: 1, 2: 1, 3: 1}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_mul_list_inplace(dtype):
    cpu, other = cpu_list(4, dtype), cpu_list(4, dtype, seed=1)
    tensors, others = spread(cpu), spread(other)
    torch._foreach_mul_(tensors, others)
    assert_one_launch_per_device("aclnnForeachMulList")
    assert_lists(tensors, [a * b for a, b in zip(cpu, other)])


def test_addcmul_scalar_inplace():
    cpu, t1, t2 = cpu_list(6), cpu_list(6, seed=1), cpu_list(6, seed=2)
    tensors, d1, d2 = spread(cpu), spread(t1), spread(t2)
    torch._foreach_addcmul_(tensors, d1, d2, value=0.25)
    assert_one_launch_per_device("aclnnForeachAddcmulScalarV2")
    assert_lists(tensors, [a + 0.25 * b * c for a, b, c in zip(cpu, t1, t2)])


def test_add_scalar_out_of_place():
    cpu = cpu_list(6)
    tensors = spread(cpu)
    results = torch._foreach_add(tensors, 1.5)
    assert_one_launch_per_device("aclnnForeachAddScalarV2")
    assert_lists(results, [t + 1.5 for t in cpu])
    assert_lists(tensors, cpu)  # unchanged


def test_add_list_out_of_place():
    cpu, other = cpu_list(6), cpu_list(6, seed=1)
    tensors, others = spread(cpu), spread(other)
    results = torch._foreach_add(tensors, others, alpha=-1)
    assert_one_launch_per_device("aclnnForeachAddListV2")
    assert_lists(results, [a - b for a, b in zip(cpu, other)])


def test_mul_scalar_out_of_place():
    cpu = cpu_list(6, torch.int32)
    tensors = spread(cpu)
    results = torch._foreach_mul(tensors, 3)
    assert_one_launch_per_device("aclnnForeachMulScalarV2")
    assert_lists(results, [t * 3 for t in cpu])


def test_single_device_list_is_one_launch():
    cpu = cpu_list(4)
    tensors = spread(cpu, [DEVICE])
    torch._foreach_add_(tensors, 1.0)
    assert_one_launch_per_device("aclnnForeachAddScalarV2", [DEVICE])
    assert_lists(tensors, [t + 1 for t in cpu], [DEVICE])


def test_one_launch_per_device_and_dtype():
    cpu = cpu_list(4) + cpu_list(4, torch.int32)
    tensors = spread(cpu, ["flagos:1", "flagos:2"])
    torch._foreach_add_(tensors, 2)
    stats = torch_fl.sim.stats()
    assert stats["op_launches"] == {"aclnnForeachAddScalarV2": 4}
    assert stats["launches"][1] == 2 and stats["launches"][2] == 2
    assert_lists(tensors, [t + 2 for t in cpu], ["flagos:1", "flagos:2"])


def test_unfusable_tensors_take_the_per_tensor_ops():
    # float64 has no fused operator, int32 + 0.5 promotes: each runs its own guarded op.
    cpu = cpu_list(3, torch.float64) + cpu_list(3, torch.int32)
    tensors = spread(cpu)
    results = torch._foreach_add(tensors, 0.5)
    stats = torch_fl.sim.stats()
    assert "aclnnForeachAddScalarV2" not in stats["op_launches"]
    assert stats["rejected_launches"] == 0 and stats["launches"][CURRENT] == 0
    assert torch.flagos.current_device() == CURRENT
    assert_lists(results, [t + 0.5 for t in cpu])


def test_pairs_on_different_devices_are_an_error():
    tensors = spread(cpu_list(3))
    others = spread(cpu_list(3), ["flagos:1", "flagos:3", "flagos:3"])
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device.*flagos:[23].*flagos:[23]"):
        torch._foreach_add_(tensors, others)
    assert torch_fl.sim.stats()["launches"] == {d: 0 for d in torch_fl.sim.stats()["launches"]}


def test_list_length_errors():
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors, got 3 and 2"):
        torch._foreach_mul_(spread(cpu_list(3)), spread(cpu_list(2)))


def test_negative_control_foreach(unguarded):
    tensors = spread(cpu_list(3), [DEVICE])
    with rejected():
        torch._foreach_add_(tensors, 1.0)


def test_negative_control_foreach_spanning_devices(unguarded):
    tensors = spread(cpu_list(3))
    with pytest.raises(RuntimeError, match=r"lives on device 1 but the launch runs on device 0"):
        torch._foreach_mul_(tensors, 2.0)
    assert torch_fl.sim.stats()["rejected_launches"] == 1


# The scalar lists of torch.optim's foreach AdamW change every step: these
# operators take them as a device tensor, so a cached executor serves every step.

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_div_scalar_list_of_one_value_is_one_launch_per_device(dtype):
    cpu = cpu_list(6, dtype)
    tensors = spread(cpu)
    torch._foreach_div_(tensors, [0.75] * 6)
    assert_one_launch_per_device("aclnnForeachDivScalar")
    assert_lists(tensors, [t / 0.75 for t in cpu])


def test_div_scalar_list_of_several_values_takes_the_per_tensor_ops():
    # aclnnForeachDivScalar divides by one value; float16 would need a float16 divisor.
    cpu = cpu_list(3) + cpu_list(3, torch.float16)
    tensors = spread(cpu)
    values = [0.5, 0.25, 2.0, 0.75, 0.75, 0.75]
    torch._foreach_div_(tensors, values)
    stats = torch_fl.sim.stats()
    assert "aclnnForeachDivScalar" not in stats["op_launches"]
    assert stats["rejected_launches"] == 0 and stats["fallback_ops"] == {}
    assert_lists(tensors, [t / v for t, v in zip(cpu, values)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_addcdiv_scalar_list_inplace(dtype):
    cpu, t1, t2 = cpu_list(6, dtype), cpu_list(6, dtype, seed=1), cpu_list(6, dtype, seed=2)
    t2 = [t.abs() + 1 for t in t2]
    tensors, d1, d2 = spread(cpu), spread(t1), spread(t2)
    values = [-0.5, 0.25, 1.5, -2.0, 0.125, 3.0]
    torch._foreach_addcdiv_(tensors, d1, d2, values)
    assert_one_launch_per_device("aclnnForeachAddcdivScalarList")
    expected = [a.clone() for a in cpu]
    torch._foreach_addcdiv_(expected, t1, t2, values)
    assert_lists(tensors, expected)


def test_new_scalar_values_hit_the_cached_executor():
    tensors, d1, d2 = spread(cpu_list(3)), spread(cpu_list(3, seed=1)), spread([t.abs() + 1 for t in cpu_list(3)])
    for step in range(1, 4):
        torch.flagos.reset_executor_cache_stats()
        torch._foreach_div_(tensors, [1 - 0.9 ** step] * 3)
        torch._foreach_addcdiv_(tensors, d1, d2, [-0.1 / step] * 3)
        stats = torch_fl._C._executor_cache_stats()
        if step > 1:
            assert stats["misses"] == 0 and stats["hits"] == 6
