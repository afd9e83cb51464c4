"""index_select, masked_fill_, embedding (and its dense backward)
(csrc/handwritten/indexing_ops.cc), plus the generated gather, scatter,
scatter_add, flip, tril/triu (yaml/ops/indexing.yaml), the NLL loss
(yaml/ops/loss.yaml), eye and linspace (yaml/ops/factory.yaml): tensors on
flagos:2 while flagos:0 is current; index tensors on the CPU or on self's
device. Every op must launch on flagos:2 only, through no CPU fallback, and
match the CPU, empty inputs included; with the guards off, the simulator
rejects the launch (negative control)."""

import pytest
import torch
import torch.nn.functional as F
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, on_device, rejected

import torch_fl

pytestmark = needs_devices
WHERE = ["cpu", DEVICE]  # where the index tensors live


def place(t, where):
    return t if where == "cpu" else t.to(where)


@pytest.mark.parametrize("where", WHERE)
def test_index_select(where):
    x = torch.randn(4, 5)
    idx = torch.tensor([3, 0, 3])
    dx = on_device(x)
    rows = torch.index_select(dx, 0, place(idx, where))
    cols = torch.index_select(dx, -1, place(idx.int(), where))
    assert_clean(rows, cols, ops=["aclnnIndexSelect"])
    assert_equal(rows, x.index_select(0, idx))
    assert_equal(cols, x.index_select(1, idx.int()))


def test_index_select_out_and_strided_self():
    x = torch.randn(5, 4)
    idx = torch.tensor([1, 1, 2])
    dx = on_device(x)
    out = torch.empty(0, device=DEVICE)
    torch_fl.sim.reset_stats()
    torch.index_select(dx.t(), 1, idx, out=out)
    assert_clean(out, ops=["aclnnIndexSelect"])
    assert_equal(out, x.t().index_select(1, idx))


def test_gather_and_scatter_take_no_cpu_index():
    # As on CUDA (torchgen's same-device check): the index must live with self.
    dx = on_device(torch.randn(3, 4))
    idx = torch.tensor([[0, 1, 2, 0]])
    for call in (lambda: torch.gather(dx, 0, idx), lambda: torch.scatter(dx, 0, idx, 2.5),
                 lambda: dx.clone().scatter_add_(0, idx, dx[:1])):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()


def test_gather_and_scatter_forms():
    x = torch.randn(3, 4)
    idx = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])
    src = torch.randn(2, 4)
    dx, dsrc = on_device(x, src)
    i = place(idx, DEVICE)
    gathered = torch.gather(dx, 0, i)
    scattered = torch.scatter(dx, 0, i, dsrc)
    valued = torch.scatter(dx, 0, i, 2.5)
    added = torch.scatter_add(dx, 0, i, dsrc)
    inplace = dx.clone().scatter_(0, i, dsrc)
    inplace_value = dx.clone().scatter_(0, i, -1.0)
    inplace_add = dx.clone().scatter_add_(0, i, dsrc)
    assert_clean(gathered, scattered, valued, added, inplace, inplace_value, inplace_add,
                 ops=["aclnnGather", "aclnnScatter", "aclnnScatterValue", "aclnnScatterAdd",
                      "aclnnInplaceScatter", "aclnnInplaceScatterValue"])
    assert_equal(gathered, torch.gather(x, 0, idx))
    assert_equal(scattered, torch.scatter(x, 0, idx, src))
    assert_equal(valued, torch.scatter(x, 0, idx, 2.5))
    assert_equal(added, torch.scatter_add(x, 0, idx, src))
    assert_equal(inplace, x.clone().scatter_(0, idx, src))
    assert_equal(inplace_value, x.clone().scatter_(0, idx, -1.0))
    assert_equal(inplace_add, x.clone().scatter_add_(0, idx, src))


def test_gather_and_scatter_of_empty_tensors_match_the_cpu():
    """An empty index, an empty self, and both: what the CPU returns, on flagos:2."""
    x, src = torch.randn(3, 4), torch.randn(3, 4)
    no_index = torch.empty(0, 4, dtype=torch.long)
    empty_x, empty_index = torch.randn(0, 4), torch.empty(0, 4, dtype=torch.long)
    for self_, idx, source in ((x, no_index, src), (empty_x, empty_index, torch.randn(0, 4))):
        dx, di, ds = on_device(self_, idx, source)
        results = [torch.gather(dx, 0, di), torch.scatter(dx, 0, di, ds), torch.scatter(dx, 0, di, 2.5),
                   torch.scatter_add(dx, 0, di, ds), dx.clone().scatter_(0, di, ds),
                   dx.clone().scatter_(0, di, -1.0), dx.clone().scatter_add_(0, di, ds)]
        expected = [torch.gather(self_, 0, idx), torch.scatter(self_, 0, idx, source),
                    torch.scatter(self_, 0, idx, 2.5), torch.scatter_add(self_, 0, idx, source),
                    self_.clone().scatter_(0, idx, source), self_.clone().scatter_(0, idx, -1.0),
                    self_.clone().scatter_add_(0, idx, source)]
        assert_clean(*results)
        for got, want in zip(results, expected):
            assert got.shape == want.shape
            assert_equal(got, want)


def test_gather_and_scatter_of_0dim_tensors_and_a_cpu_0dim_index():
    """A 0-dim self with a 0-dim index (dim 0 or -1), the index a CPU number-like tensor too."""
    x, idx = torch.tensor(1.5), torch.tensor(0)
    dx = on_device(x)
    for where in WHERE:
        for dim in (0, -1):
            got = [torch.gather(dx, dim, place(idx, where)), torch.scatter(dx, dim, place(idx, where), 4.0),
                   torch.scatter_add(dx, dim, place(idx, where), dx)]
            assert_clean(*got)
            assert_equal(got[0], torch.gather(x, dim, idx))
            assert_equal(got[1], torch.scatter(x, dim, idx, 4.0))
            assert_equal(got[2], torch.scatter_add(x, dim, idx, x))


def test_gather_and_scatter_check_at_the_call():
    """ATen's meta functions, in the generated wrappers: the CPU's errors, and no launch."""
    dx, dsrc, float_index, index = on_device(torch.randn(3, 4), torch.randn(2, 4), torch.zeros(2, 4),
                                             torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int32/int64 for index"):
        torch.gather(dx, 0, float_index)
    with pytest.raises(RuntimeError, match="scatter\\(\\): Expected dtype int32/int64 for index"):
        torch.scatter(dx, 0, float_index, dsrc)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.gather(dx, 2, index)
    assert torch_fl.sim.stats()["op_launches"] == {}


def test_gather_backward_runs_on_device():
    x = torch.randn(3, 4, requires_grad=True)
    idx = torch.tensor([[0, 1, 2, 0]])
    didx = idx.to(DEVICE)
    dx = x.detach().to(DEVICE).requires_grad_()
    torch_fl.sim.reset_stats()
    torch.gather(dx, 0, didx).sum().backward()
    assert_clean(dx.grad, ops=["aclnnGather", "aclnnInplaceScatter"])  # scatter_add_ into zeros
    torch.gather(x, 0, idx).sum().backward()
    assert_equal(dx.grad, x.grad)


@pytest.mark.parametrize("where", WHERE)
def test_masked_fill_scalar_and_tensor(where):
    x = torch.randn(3, 4)
    mask = x > 0
    row_mask = torch.tensor([True, False, False, True])  # broadcast over rows
    dx = on_device(x)
    m, r = place(mask, where), place(row_mask, where)
    a = dx.clone().masked_fill_(m, 7.0)
    b = dx.masked_fill(r, float("-inf"))
    c = dx.clone().masked_fill_(m, torch.tensor(3.0))  # a CPU 0-dim value
    d = dx.clone().masked_fill_(m, torch.tensor(-2.0, device=DEVICE))  # a device 0-dim value
    assert_clean(a, b, c, d, ops=["aclnnInplaceMaskedFillScalar", "aclnnInplaceMaskedFillTensor"])
    assert_equal(a, x.clone().masked_fill_(mask, 7.0))
    assert_equal(b, x.masked_fill(row_mask, float("-inf")))
    assert_equal(c, x.masked_fill(mask, 3.0))
    assert_equal(d, x.masked_fill(mask, -2.0))


@pytest.mark.parametrize("where", WHERE)
def test_embedding_forward_and_backward(where):
    weight = torch.randn(6, 3, requires_grad=True)
    tokens = torch.tensor([[1, 4, 1], [0, 5, 5]])
    dw = weight.detach().to(DEVICE).requires_grad_()
    t = place(tokens, where)
    torch_fl.sim.reset_stats()
    out = F.embedding(t, dw, padding_idx=5)
    (out * 2).sum().backward()
    assert_clean(out, dw.grad, ops=["aclnnEmbedding", "aclnnEmbeddingDenseBackward"])
    expected = F.embedding(tokens, weight, padding_idx=5)
    (expected * 2).sum().backward()
    assert_equal(out, expected.detach())
    assert_equal(dw.grad, weight.grad)


def test_nll_loss_takes_no_cpu_target():
    # As on CUDA (torchgen's same-device check): the target must live with the input.
    dl = on_device(torch.randn(3, 4))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        F.cross_entropy(dl, torch.tensor([0, 3, 1]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_forward_and_backward(reduction):
    logits = torch.randn(5, 4, requires_grad=True)
    target = torch.tensor([0, 3, 1, -100, 2])
    weight = torch.tensor([1.0, 2.0, 0.5, 1.5])
    dl = logits.detach().to(DEVICE).requires_grad_()
    dweight = weight.to(DEVICE)
    torch_fl.sim.reset_stats()
    loss = F.cross_entropy(dl, target.to(DEVICE), weight=dweight, reduction=reduction)
    loss.sum().backward()
    assert_clean(loss, dl.grad, ops=["aclnnNLLLoss", "aclnnNLLLossBackward"])
    expected = F.cross_entropy(logits, target, weight=weight, reduction=reduction)
    expected.sum().backward()
    assert_equal(loss, expected.detach())
    assert_equal(dl.grad, logits.grad)


def test_flip_tril_triu():
    x = torch.randn(2, 3, 4)
    dx = on_device(x)
    flipped = dx.flip(0, -1)
    lower, upper = torch.tril(dx, -1), torch.triu(dx, 1)
    lower_, upper_ = dx.clone().tril_(1), dx.clone().triu_()
    assert_clean(flipped, lower, upper, lower_, upper_,
                 ops=["aclnnFlip", "aclnnTril", "aclnnTriu", "aclnnInplaceTril", "aclnnInplaceTriu"])
    assert_equal(flipped, x.flip(0, -1))
    assert_equal(lower, torch.tril(x, -1))
    assert_equal(upper, torch.triu(x, 1))
    assert_equal(lower_, x.clone().tril_(1))
    assert_equal(upper_, x.clone().triu_())


def test_nll_loss_of_an_empty_batch_matches_the_cpu():
    """mean over no element is NaN, sum 0, none an empty tensor; the gradient is empty."""
    for reduction in ("mean", "sum", "none"):
        logits = torch.randn(0, 4, requires_grad=True)
        target = torch.empty(0, dtype=torch.long)
        dl = logits.detach().to(DEVICE).requires_grad_()
        torch_fl.sim.reset_stats()
        loss = F.nll_loss(dl, target.to(DEVICE), reduction=reduction)
        loss.sum().backward()
        assert_clean(loss, dl.grad)
        expected = F.nll_loss(logits, target, reduction=reduction)
        expected.sum().backward()
        torch.testing.assert_close(loss.detach().cpu(), expected.detach(), equal_nan=True)
        assert_equal(dl.grad, logits.grad)


def test_nll_loss_with_a_strided_weight():
    """The class weights reach the operator dense (a strided view is made contiguous)."""
    logits, target = torch.randn(4, 3), torch.tensor([2, 0, 1, 2])
    weight = torch.tensor([1.0, 9.0, 2.0, 9.0, 0.5, 9.0])[::2]
    dl, dt, dw = on_device(logits, target, torch.tensor([1.0, 9.0, 2.0, 9.0, 0.5, 9.0]))
    loss = F.nll_loss(dl, dt, weight=dw[::2])
    assert_clean(loss, ops=["aclnnNLLLoss"])
    assert_equal(loss, F.nll_loss(logits, target, weight=weight))


def test_flip_empty_0dim_and_its_checks():
    for x, dims in ((torch.randn(0, 3), [0, 1]), (torch.tensor(2.0), [0]), (torch.tensor(2.0), [])):
        dx = on_device(x)
        flipped = dx.flip(dims)
        assert_clean(flipped)
        assert_equal(flipped, x.flip(dims))
    dx = on_device(torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        dx.flip(1, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        dx.flip(2)
    assert torch_fl.sim.stats()["op_launches"] == {}


def test_eye_and_linspace_empty_and_their_checks():
    torch_fl.sim.reset_stats()
    got = [torch.eye(0, device=DEVICE), torch.eye(0, 3, device=DEVICE), torch.eye(2, 0, device=DEVICE),
           torch.linspace(0, 1, 0, device=DEVICE), torch.linspace(3, 1, 1, device=DEVICE)]
    expected = [torch.eye(0), torch.eye(0, 3), torch.eye(2, 0), torch.linspace(0, 1, 0), torch.linspace(3, 1, 1)]
    assert_clean(*got)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        assert_equal(g, e)
    torch_fl.sim.reset_stats()
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        torch.eye(-1, device=DEVICE)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
        torch.eye(2, -2, device=DEVICE)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        torch.linspace(0, 1, -1, device=DEVICE)
    assert torch_fl.sim.stats()["op_launches"] == {}


def test_eye_and_linspace_on_their_device_argument():
    torch_fl.sim.reset_stats()
    square, wide = torch.eye(3, device=DEVICE), torch.eye(2, 4, dtype=torch.float64, device=DEVICE)
    line = torch.linspace(-1, 2, 7, device=DEVICE)
    assert_clean(square, wide, line, ops=["aclnnEye", "aclnnLinspace"])
    assert_equal(square, torch.eye(3))
    assert_equal(wide, torch.eye(2, 4, dtype=torch.float64))
    assert_equal(line, torch.linspace(-1, 2, 7))


def test_tensors_on_two_devices_are_refused():
    x = torch.randn(3, 4, device=DEVICE)
    idx = torch.tensor([0, 1], device="flagos:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.index_select(x, 0, idx)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x.masked_fill_(torch.ones(3, 4, dtype=torch.bool, device="flagos:1"), 0.0)


# ---- negative controls: the same calls with the guards off are rejected ----

def test_negative_control_index_select(unguarded):
    dx = on_device(torch.randn(4, 5))
    idx = torch.tensor([1, 2], device=DEVICE)
    with rejected():
        torch.index_select(dx, 0, idx)


def test_negative_control_masked_fill(unguarded):
    dx, mask = on_device(torch.randn(4, 5), torch.ones(4, 5, dtype=torch.bool))
    with rejected():
        dx.masked_fill_(mask, 1.0)


def test_negative_control_nll_loss(unguarded):
    logits = on_device(torch.randn(3, 4))
    target = torch.tensor([0, 1, 2], device=DEVICE)
    with rejected():
        torch.ops.aten.nll_loss_forward(logits, target, None, 1, -100)


def test_negative_control_eye(unguarded):
    torch_fl.sim.reset_stats()
    with rejected():
        torch.eye(3, device=DEVICE)
