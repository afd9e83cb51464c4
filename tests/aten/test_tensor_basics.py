"""Flagos tensors exist, move and are read back on the device they name,
whatever device is current, and leave the current device as it was."""

import itertools

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

DEVICES = range(4)


@pytest.mark.parametrize("index", DEVICES)
def test_arange_round_trips_on_every_device(index):
    x = torch.arange(6.0, device=f"flagos:{index}")
    assert x.device == torch.device("flagos", index)
    assert x.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert torch.flagos.current_device() == 0


def test_empty_allocates_on_requested_device_not_current():
    torch.flagos.set_device(0)
    before = torch_fl.sim.stats()["live_allocations"]
    x = torch.empty(1024, device="flagos:2")
    after = torch_fl.sim.stats()["live_allocations"]
    assert x.device == torch.device("flagos", 2)
    assert torch_fl.sim.pointer_device(x.data_ptr()) == 2
    assert after[2] >= before[2]
    assert torch.flagos.current_device() == 0
    assert torch_fl.sim.stats()["set_device_calls"] <= 2  # at most one switch and restore


def test_empty_strided_on_requested_device():
    torch.flagos.set_device(3)
    x = torch.empty_strided((2, 3), (1, 2), device="flagos:1")
    assert x.device == torch.device("flagos", 1)
    assert x.stride() == (1, 2)
    assert torch_fl.sim.pointer_device(x.data_ptr()) == 1
    assert torch.flagos.current_device() == 3


def test_bare_flagos_device_means_current():
    torch.flagos.set_device(2)
    assert torch.empty(2, device="flagos").device == torch.device("flagos", 2)


def test_memory_allocated_counts_live_tensors():
    base = torch.flagos.memory_allocated(3)
    x = torch.empty(1000, dtype=torch.float32, device="flagos:3")
    assert torch.flagos.memory_allocated(3) >= base + 4000
    assert torch.flagos.memory_allocated(0) == torch.flagos.memory_allocated(0)
    del x
    assert torch.flagos.memory_allocated(3) == base


@pytest.mark.parametrize("src,dst", list(itertools.permutations(DEVICES, 2)))
def test_copy_between_every_pair_is_exact(src, dst):
    torch.flagos.set_device((src + dst) % 4)
    current = torch.flagos.current_device()
    host = torch.randn(5, 7, dtype=torch.float64)
    a = host.to(f"flagos:{src}")
    b = a.to(f"flagos:{dst}")
    assert b.device == torch.device("flagos", dst)
    assert torch.equal(b.cpu(), host)
    assert torch.flagos.current_device() == current
    assert torch_fl.sim.stats()["rejected_launches"] == 0


def test_copy_strided_and_dtype_changing():
    host = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = host.to("flagos:1")
    torch.flagos.set_device(2)
    view = x.t()[1:5:2]  # non-contiguous, offset view
    assert torch.equal(view.cpu(), host.t()[1:5:2])
    moved = view.to("flagos:3", dtype=torch.float64)
    assert moved.dtype == torch.float64
    assert torch.equal(moved.cpu(), host.t()[1:5:2].double())
    target = torch.zeros(6, 4, device="flagos:0").t()
    target.copy_(x)
    assert torch.equal(target.cpu(), host)
    assert torch.flagos.current_device() == 2
    assert torch_fl.sim.stats()["rejected_launches"] == 0


def test_copy_into_cpu_non_contiguous():
    x = torch.arange(6.0).reshape(2, 3).to("flagos:2")
    out = torch.zeros(3, 2).t()
    out.copy_(x)
    assert torch.equal(out, torch.arange(6.0).reshape(2, 3))


def test_views_share_storage():
    x = torch.arange(12.0, device="flagos:1")
    v = x.view(3, 4)[1]
    assert v.cpu().tolist() == [4.0, 5.0, 6.0, 7.0]
    assert v.data_ptr() == x.data_ptr() + 4 * 4
    s = x.as_strided((2, 2), (1, 3), 2)
    assert s.cpu().tolist() == [[2.0, 5.0], [3.0, 6.0]]


def test_resize_grows_on_own_device():
    torch.flagos.set_device(0)
    x = torch.arange(4.0, device="flagos:3")
    x.resize_(10)
    assert x.shape == (10,)
    assert torch_fl.sim.pointer_device(x.data_ptr()) == 3
    assert x[:4].cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torch.flagos.current_device() == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_fill_and_zero_on_non_current_device(dtype):
    torch.flagos.set_device(0)
    x = torch.empty(3, 4, dtype=dtype, device="flagos:2")
    x.fill_(1)
    assert torch.equal(x.cpu(), torch.ones(3, 4, dtype=dtype))
    x.zero_()
    assert torch.equal(x.cpu(), torch.zeros(3, 4, dtype=dtype))
    stats = torch_fl.sim.stats()
    assert stats["launches"][2] >= 2
    assert stats["launches"][0] == 0
    assert stats["rejected_launches"] == 0
    assert torch.flagos.current_device() == 0


def test_item_reads_from_any_device():
    torch.flagos.set_device(1)
    x = torch.tensor([1.5, 2.5, 3.5]).to("flagos:3")
    assert x[1].item() == 2.5
    assert torch.flagos.current_device() == 1


def test_cpu_fallback_counts_and_warns_once():
    # i0 has no flagos kernel and no other test uses it: its one warning is ours.
    x = torch.arange(5.0, device="flagos:1")
    with pytest.warns(UserWarning, match="aten::i0.out has no flagos kernel") as record:
        y = torch.i0(x)
        torch.i0(x)
    assert len([w for w in record if "has no flagos kernel" in str(w.message)]) == 1
    assert y.device == torch.device("flagos", 1)
    assert torch.allclose(y.cpu(), torch.i0(torch.arange(5.0)))
    assert torch_fl.sim.stats()["fallback_ops"]["aten::i0.out"] == 2


def test_strict_mode_raises_instead_of_falling_back():
    x = torch.arange(5.0, device="flagos:1")
    torch_fl._C._set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="special_erfcx.* has no flagos kernel.*FLAGOS_STRICT=1"):
            torch.special.erfcx(x)
    finally:
        torch_fl._C._set_strict(False)


def test_cpu_fallback_rejects_two_flagos_devices():
    # special_xlog1py has no flagos kernel: the fallback itself must refuse mixed devices.
    x = torch.arange(3.0, device="flagos:1")
    y = torch.arange(3.0, device="flagos:2")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*flagos:1.*flagos:2|Expected all tensors to be on the same device.*flagos:2.*flagos:1"):
        torch.ops.aten.special_xlog1py(x, y)
