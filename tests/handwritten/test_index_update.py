"""index_copy and index_add (yaml/ops/indexing.yaml) on flagos:2
while flagos:0 is current, against the CPU: functional, in-place and out=
forms, negative dims, empty indices, alpha, dtypes; ATen's meta checks at
the call; and the static KV cache's write (transformers' StaticCache does
`cache.index_copy_(2, cache_position, states)`)."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected, strict

pytestmark = needs_devices

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_copy(dtype, dim):
    x = torch.arange(24).reshape(4, 6).to(dtype)
    index = torch.tensor([3, 0, 2])
    sizes = [4, 6]
    sizes[dim] = 3
    source = (-torch.arange(sizes[0] * sizes[1]).reshape(sizes)).to(dtype)
    dx, di, ds = on_device(x, index, source)
    out = torch.index_copy(dx, dim, di, ds)
    assert_clean(out, ops=["aclnnIndexCopy"])
    assert_equal(out, torch.index_copy(x, dim, index, source))
    assert_equal(dx, x)  # functional: self untouched
    dx.index_copy_(dim, di, ds)
    assert_equal(dx, x.index_copy_(dim, index, source))
    assert_clean(dx, ops=["aclnnInplaceIndexCopy"])


def test_index_copy_out_and_empty_index():
    x, source = torch.randn(5, 3), torch.randn(2, 3)
    index = torch.tensor([4, 1])
    dx, di, ds = on_device(x, index, source)
    out = torch.empty(0, device=DEVICE)
    torch.index_copy(dx, 0, di, ds, out=out)
    assert_equal(out, torch.index_copy(x, 0, index, source))
    empty = torch.tensor([], dtype=torch.long)
    got = torch.index_copy(dx, 0, empty.to(DEVICE), torch.empty(0, 3, device=DEVICE))
    assert_equal(got, x)
    assert_clean(out, got)


def test_index_copy_checks_at_the_call():
    dx, ds = on_device(torch.randn(4, 3), torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="index_copy_\\(\\): Expected a long tensor for index"):
        dx.index_copy_(0, torch.tensor([0.0, 1.0], device=DEVICE), ds)
    with pytest.raises(IndexError, match="Number of indices \\(3\\) should be equal to source.size\\(dim\\) \\(2\\)"):
        dx.index_copy_(0, torch.tensor([0, 1, 2], device=DEVICE), ds)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        dx.index_copy_(0, torch.tensor([0, 1], device="flagos:1"), ds)
    assert torch_fl.sim.stats()["op_launches"].get("aclnnInplaceIndexCopy", 0) == 0


def test_static_cache_write_in_strict_mode():
    # [batch, heads, max_len, head_dim]: one step writes position 5.
    cache = torch.zeros(1, 2, 8, 4)
    states = torch.randn(1, 2, 1, 4)
    position = torch.tensor([5])
    dc, ds, dp = on_device(cache, states, position)
    with strict():
        dc.index_copy_(2, dp, ds)
    assert_clean(dc, ops=["aclnnInplaceIndexCopy"])
    assert_equal(dc, cache.index_copy_(2, position, states))


def test_negative_control_index_copy(unguarded):
    dx, di, ds = on_device(torch.randn(4, 3), torch.tensor([1]), torch.randn(1, 3))
    with rejected():
        torch.ops.aten.index_copy_(dx, 0, di, ds)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add(dtype):
    x = torch.arange(20).reshape(4, 5).to(dtype)
    index = torch.tensor([0, 3, 0])  # a repeated index adds twice
    source = torch.ones(4, 3).to(dtype)
    dx, di, ds = on_device(x, index, source)
    out = torch.index_add(dx, 1, di, ds, alpha=2)
    assert_clean(out, ops=["aclnnIndexAdd"])
    assert_equal(out, torch.index_add(x, 1, index, source, alpha=2))
    dx.index_add_(-1, di, ds)
    assert_equal(dx, x.index_add_(-1, index, source))
    out2 = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.index_add(dx, 0, torch.tensor([2], device=DEVICE), torch.ones(1, 5, dtype=dtype, device=DEVICE), out=out2)
    assert_equal(out2, x.index_add(0, torch.tensor([2]), torch.ones(1, 5, dtype=dtype)))
    assert_clean(dx, out2)


def test_index_add_empty():
    x = torch.randn(3, 2)
    dx = on_device(x)
    out = torch.index_add(dx, 0, torch.empty(0, dtype=torch.long, device=DEVICE), torch.empty(0, 2, device=DEVICE))
    assert_equal(out, x)
    empty = torch.index_add(torch.empty(0, 2, device=DEVICE), 0, torch.empty(0, dtype=torch.long, device=DEVICE),
                            torch.empty(0, 2, device=DEVICE))
    assert empty.shape == (0, 2)
    assert_clean(out, empty)
    assert "aclnnIndexAdd" not in torch_fl.sim.stats()["op_launches"]


def test_empty_index_in_every_form_copies_self():
    """No position: out= and functional forms are self, in place self is unchanged; neither
    index operator launches (CANN's may write nothing for an empty index)."""
    x = torch.randn(3, 2)
    dx, no_index, no_source = on_device(x, torch.empty(0, dtype=torch.long), torch.empty(0, 2))
    out_add, out_copy = torch.full((3, 2), 7.0, device=DEVICE), torch.full((3, 2), 7.0, device=DEVICE)
    torch_fl.sim.reset_stats()
    got = [torch.index_add(dx, 0, no_index, no_source, out=out_add), dx.clone().index_add_(0, no_index, no_source),
           torch.index_copy(dx, 0, no_index, no_source, out=out_copy), dx.clone().index_copy_(0, no_index, no_source),
           torch.index_copy(dx, 0, no_index, no_source)]
    assert_clean(*got)
    for result in got:
        assert_equal(result, x)
    launched = torch_fl.sim.stats()["op_launches"]
    assert not {"aclnnIndexAdd", "aclnnIndexCopy", "aclnnInplaceIndexCopy"} & set(launched), launched


@pytest.mark.parametrize("where", ["cpu", DEVICE])
def test_0dim_index_names_one_position(where):
    """A 0-dim index (on the CPU: a number-like tensor, copied) is one position, flattened for CANN."""
    x, source = torch.randn(4, 3), torch.randn(3)
    index = torch.tensor(2)
    dx, ds = on_device(x, source)
    di = index if where == "cpu" else index.to(DEVICE)
    added = torch.index_add(dx.unsqueeze(0), 1, di, ds.view(1, 1, 3), alpha=3)
    copied = torch.index_copy(dx, 0, di, ds.view(1, 3))
    assert_clean(added, copied, ops=["aclnnIndexAdd", "aclnnIndexCopy"])
    assert_equal(added, torch.index_add(x.unsqueeze(0), 1, index, source.view(1, 1, 3), alpha=3))
    assert_equal(copied, torch.index_copy(x, 0, index, source.view(1, 3)))


def test_index_add_checks_at_the_call():
    dx = on_device(torch.randn(4, 3))
    with pytest.raises(IndexError, match="index_add_\\(\\): Index is supposed to be a vector"):
        dx.index_add_(0, torch.zeros(2, 2, dtype=torch.long, device=DEVICE), torch.randn(4, 3, device=DEVICE))
    with pytest.raises(RuntimeError, match="self \\(Float\\) and source \\(Double\\) must have the same scalar type"):
        dx.index_add_(0, torch.tensor([1], device=DEVICE), torch.randn(1, 3, dtype=torch.double, device=DEVICE))


def test_negative_control_index_add(unguarded):
    dx, di, ds = on_device(torch.randn(4, 3), torch.tensor([1]), torch.randn(1, 3))
    with rejected():
        torch.ops.aten.index_add(dx, 0, di, ds)
