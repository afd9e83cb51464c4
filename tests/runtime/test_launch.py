"""The guarded launch path: guard, stream, workspace, executor cache,
sanitizer and failures, shown on handwritten kernels (fill_, zero_, copy).
Each guard test has its negative control: the same call with the guards
switched off must fail in the simulator."""

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")
C = torch_fl._C


def test_fill_on_other_device_is_guarded():
    torch.flagos.set_device(1)
    x = torch.empty(3, device="flagos:0")
    torch_fl.sim.reset_stats()
    x.fill_(0.5)
    stats = torch_fl.sim.stats()
    assert stats["set_device_calls"] == 2  # switch and restore
    assert stats["launches"] == {0: 1, 1: 0, 2: 0, 3: 0}
    torch.flagos.synchronize(0)
    assert x.cpu().tolist() == [0.5, 0.5, 0.5]
    assert x.device == torch.device("flagos", 0)
    assert torch.flagos.current_device() == 1
    assert torch_fl.sim.stats()["rejected_launches"] == 0


def test_negative_control_fill_without_guard_is_rejected(unguarded):
    torch.flagos.set_device(1)
    x = torch.empty(3, device="flagos:0")
    with pytest.raises(RuntimeError, match=r"aclnnInplaceFillScalar.*device 0.*device 1|aclnnInplaceFillScalar.*device 1.*device 0"):
        x.fill_(0.5)
    assert torch_fl.sim.stats()["rejected_launches"] == 1
    assert torch.flagos.current_device() == 1


def test_negative_control_fill_without_guard_gives_nan(unguarded):
    torch.flagos.set_device(1)
    x = torch.zeros(3).to("flagos:0")  # a host copy: no launch while unguarded
    torch_fl.sim.set_mismatch_mode("nan")
    x.fill_(0.5)
    assert torch.isnan(x.cpu()).all()
    assert torch_fl.sim.stats()["mismatched_launches"] == 1


def test_sanitizer_names_op_and_argument():
    torch.flagos.set_device(0)
    x = torch.empty(3, device="flagos:2")
    C._set_guards_enabled(False)
    with pytest.raises(RuntimeError, match=r"flagos device check: aclnnInplaceFillScalar: argument 'self' .*lives on flagos:2 but the launch runs on flagos:0"):
        x.fill_(1.0)
    # The sanitizer stopped it before the runtime saw it.
    assert torch_fl.sim.stats()["rejected_launches"] == 0


def test_same_device_launch_makes_no_set_device_call():
    torch.flagos.set_device(2)
    x = torch.empty(4, device="flagos:2")
    torch_fl.sim.reset_stats()
    for _ in range(5):
        x.fill_(3.0)
    stats = torch_fl.sim.stats()
    assert stats["set_device_calls"] == 0
    assert stats["launches"][2] == 5


def test_cross_device_launch_makes_two_set_device_calls():
    torch.flagos.set_device(2)
    x = torch.empty(4, device="flagos:3")
    torch_fl.sim.reset_stats()
    x.zero_()
    assert torch_fl.sim.stats()["set_device_calls"] == 2
    assert torch.flagos.current_device() == 2


def test_executor_cache_is_keyed_by_device():
    a = torch.empty(16, device="flagos:0")
    b = torch.empty(16, device="flagos:1")
    C._reset_executor_cache_stats()
    a.fill_(1.0)
    b.fill_(1.0)
    stats = C._executor_cache_stats()
    assert stats["misses"] == 2 and stats["hits"] == 0
    a.fill_(1.0)
    b.fill_(1.0)
    stats = C._executor_cache_stats()
    assert stats["misses"] == 2 and stats["hits"] == 2
    assert a.cpu().tolist() == [1.0] * 16
    assert b.cpu().tolist() == [1.0] * 16
    assert torch_fl.sim.stats()["rejected_launches"] == 0


def test_scalar_values_are_part_of_the_cache_key():
    a = torch.empty(16, device="flagos:2")
    C._reset_executor_cache_stats()
    a.fill_(1.0)
    a.fill_(2.0)
    assert C._executor_cache_stats()["misses"] == 2
    assert a.cpu().tolist() == [2.0] * 16


def test_cached_executor_is_rebound_to_new_addresses():
    tensors = [torch.full((8,), float(i + 1)).to("flagos:1") for i in range(3)]
    C._reset_executor_cache_stats()
    for t in tensors:
        t.zero_()  # one executor, rebound to each tensor
    stats = C._executor_cache_stats()
    # One executor for the three: built here (a miss) unless an earlier test
    # already cached it for this shape on flagos:1.
    assert stats["hits"] + stats["misses"] == 3 and stats["misses"] <= 1
    for t in tensors:
        assert t.cpu().tolist() == [0.0] * 8


def test_a_hit_rebinds_only_the_tensors_that_moved():
    # The cache remembers where each cached aclTensor points: a hit on the
    # same storage makes no aclSet*TensorAddr call, one on another storage
    # rebinds exactly the tensors that moved, and going back rebinds again
    # (a stale remembered address would leave the executor writing into b).
    a = torch.full((8,), 5.0).to("flagos:1")
    b = torch.full((8,), 6.0).to("flagos:1")
    a.zero_()  # miss: the executor is built on a
    C._reset_executor_cache_stats()
    a.zero_()
    assert C._executor_cache_stats()["rebinds"] == 0
    b.zero_()  # aclnnInplaceZero's one output, rebound to b
    moved = C._executor_cache_stats()["rebinds"]
    assert moved == 1
    a.copy_(torch.full((8,), 7.0))
    b.copy_(torch.full((8,), 8.0))
    a.zero_()  # back to a
    assert C._executor_cache_stats()["rebinds"] == 2 * moved
    assert C._executor_cache_stats()["hits"] == 3
    assert a.cpu().tolist() == [0.0] * 8
    assert b.cpu().tolist() == [8.0] * 8


def test_an_op_in_a_loop_keeps_its_addresses():
    # The allocator hands out the most recently freed block of a size, so an
    # op's output comes back at the same address call after call and the
    # cached executor is never rebound. Two spare blocks of that size are in
    # the pool: handing out the oldest block would rotate between them.
    x = torch.ones(4, device="flagos:1")
    y = torch.ones(4, device="flagos:1")
    spare = [torch.empty(4, device="flagos:1") for _ in range(2)]
    del spare
    for _ in range(3):
        x + y
    C._reset_executor_cache_stats()
    addresses = {(x + y).data_ptr() for _ in range(20)}
    stats = C._executor_cache_stats()
    assert stats["hits"] == 20 and stats["misses"] == 0
    assert stats["rebinds"] == 0
    assert len(addresses) == 1


def test_launches_on_a_stream_share_one_workspace():
    # Each launch asks for a workspace; the launch stream's block serves them
    # all, so an op in a loop allocates its output and nothing else.
    x = torch.ones(4, device="flagos:1")
    y = torch.ones(4, device="flagos:1")
    for _ in range(3):
        x + y
    before = torch.flagos.memory_stats(1)["allocation.all.allocated"]
    for _ in range(20):
        x + y
    assert torch.flagos.memory_stats(1)["allocation.all.allocated"] - before == 20


def test_workspace_lives_on_launch_device():
    torch.flagos.set_device(0)
    x = torch.empty(4, device="flagos:3")
    C._set_device_check(False)
    try:
        x.fill_(1.0)  # the simulator validates workspace and stream devices
    finally:
        C._set_device_check(True)
    assert torch_fl.sim.stats()["rejected_launches"] == 0


@pytest.mark.parametrize("phase", [1, 2])
def test_injected_failure_raises_restores_and_does_not_leak(phase):
    torch.flagos.set_device(1)
    x = torch.empty(64, device="flagos:3")
    x.fill_(0.0)  # warm the allocator and the executor cache
    allocated = torch.flagos.memory_allocated(3)
    torch_fl.sim.inject_fault("aclnnInplaceFillScalar", phase)
    C._set_executor_cache(False)  # phase 1 must run to fail there
    try:
        with pytest.raises(RuntimeError, match=rf"aclnnInplaceFillScalar failed at phase {phase}.*flagos:3.*injected fault"):
            x.fill_(7.0)
    finally:
        C._set_executor_cache(True)
    assert torch.flagos.current_device() == 1
    assert torch.flagos.memory_allocated(3) == allocated
    x.fill_(2.0)
    assert x.cpu().tolist() == [2.0] * 64


def test_absent_optionals_are_part_of_the_cache_key():
    # Same shapes, one optional present and the other absent, in both orders:
    # a cache keyed without presence would bind the bias as the weight.
    x = torch.randn(4, 6)
    w = torch.randn(6)
    b = torch.randn(6)
    xd, wd, bd = x.to("flagos:1"), w.to("flagos:1"), b.to("flagos:1")
    with_weight = torch.nn.functional.layer_norm(xd, (6,), weight=wd)
    with_bias = torch.nn.functional.layer_norm(xd, (6,), bias=bd)
    assert torch.allclose(with_weight.cpu(), torch.nn.functional.layer_norm(x, (6,), weight=w), atol=1e-5)
    assert torch.allclose(with_bias.cpu(), torch.nn.functional.layer_norm(x, (6,), bias=b), atol=1e-5)
    assert "aclnnLayerNorm" in torch_fl.sim.stats()["op_launches"]


def test_cached_executor_keeps_its_argument_objects_and_a_hit_makes_none():
    # nnopbase's executors use the aclTensor objects they were built with, and
    # rebinding updates those objects: the cache keeps them with the executor.
    x = torch.empty(17, device="flagos:1")
    C._reset_executor_cache_stats()
    x.fill_(2.75)  # miss: phase 1 with new objects (tensor, scalar), which the cache keeps
    x.fill_(2.75)
    assert (C._executor_cache_stats()["misses"], C._executor_cache_stats()["hits"]) == (1, 1)
    y = torch.empty(17, device="flagos:1")
    before = torch_fl.sim.stats()["live_arguments"]
    y.fill_(2.75)  # a hit, rebound to y's storage
    assert torch_fl.sim.stats()["live_arguments"] == before
    assert y.cpu().tolist() == [2.75] * 17 and x.cpu().tolist() == [2.75] * 17


def test_an_executor_that_cannot_repeat_runs_once_and_is_not_cached():
    # CANN refuses aclSetAclOpExecutorRepeatable for data-dependent operators (561000).
    x = torch.arange(6.0, device="flagos:2")
    mask = x > 2
    C._reset_executor_cache_stats()
    executors = torch_fl.sim.stats()["live_executors"]
    for _ in range(3):
        assert torch.masked_select(x, mask).cpu().tolist() == [3.0, 4.0, 5.0]
    assert torch_fl.sim.stats()["op_launches"]["aclnnMaskedSelect"] == 3
    assert torch_fl.sim.stats()["live_executors"] <= executors + 1  # the count kernel's, at most
