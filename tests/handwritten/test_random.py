"""Random fills (csrc/handwritten/random.cc) on the per-device (seed, offset)
generator (csrc/runtime/generator.h, hooks.cc): a fixed seed gives the same
values on every device, each device's generator is independent of the
others, and every fill launches on its tensor's device (flagos:2 while
flagos:0 is current), through no CPU fallback."""

import pytest
import torch
from hw_util import DEVICE, assert_clean, needs_devices, rejected

import torch_fl

pytestmark = needs_devices
OTHER = "flagos:3"


def draws(device):
    return [
        torch.randn(64, device=device),
        torch.rand(64, device=device),
        torch.randint(-5, 5, (64,), device=device),
        torch.bernoulli(torch.full((64,), 0.3, device=device)),
        torch.empty(64, device=device).uniform_(-2, 3),
        torch.empty(64, device=device).normal_(1.5, 0.5),
        torch.empty(64, device=device).bernoulli_(0.7),
        torch.empty(64, dtype=torch.int64, device=device).random_(100),
    ]


def test_same_seed_same_values_on_two_devices():
    torch.manual_seed(1234)
    first = [t.cpu() for t in draws(DEVICE)]
    torch.manual_seed(1234)
    second = [t.cpu() for t in draws(OTHER)]
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    torch.manual_seed(1234)
    again = [t.cpu() for t in draws(DEVICE)]
    for a, b in zip(first, again):
        assert torch.equal(a, b)
    assert torch.flagos.current_device() == 0


def test_draws_on_one_device_leave_another_unchanged():
    torch.manual_seed(7)
    expected = [torch.randn(32, device=OTHER).cpu() for _ in range(2)]
    torch.manual_seed(7)
    draws(DEVICE)  # device 2 moves its own offset only
    first = torch.randn(32, device=OTHER).cpu()
    draws(DEVICE)
    second = torch.randn(32, device=OTHER).cpu()
    assert torch.equal(first, expected[0])
    assert torch.equal(second, expected[1])
    assert not torch.equal(first, second)  # the offset advances per draw


def test_every_fill_launches_on_its_tensors_device():
    torch.manual_seed(0)
    torch_fl.sim.reset_stats()
    results = draws(DEVICE)
    assert_clean(*results, ops=["aclnnInplaceNormal", "aclnnInplaceUniform", "aclnnInplaceRandom",
                                "aclnnInplaceBernoulli", "aclnnInplaceBernoulliTensor"])


def test_values_follow_their_distributions():
    torch.manual_seed(3)
    n = torch.randn(20000, device=DEVICE).cpu()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    u = torch.empty(20000, device=DEVICE).uniform_(-2, 3).cpu()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.1
    r = torch.randint(-5, 5, (20000,), device=DEVICE).cpu()
    assert r.min() == -5 and r.max() == 4
    b = torch.empty(20000, device=DEVICE).bernoulli_(0.7).cpu()
    assert set(b.unique().tolist()) == {0.0, 1.0} and abs(b.mean() - 0.7) < 0.02
    p = torch.tensor([0.0, 1.0] * 50, device=DEVICE)
    assert torch.equal(torch.bernoulli(p).cpu(), p.cpu())


def test_user_generator_and_its_state():
    gen = torch.Generator(device=DEVICE)
    assert gen.device == torch.device(DEVICE)
    gen.manual_seed(99)
    state = gen.get_state()
    a = torch.randn(16, device=DEVICE, generator=gen).cpu()
    b = torch.randn(16, device=DEVICE, generator=gen).cpu()
    gen.set_state(state)
    assert torch.equal(torch.randn(16, device=DEVICE, generator=gen).cpu(), a)
    assert not torch.equal(a, b)
    other = torch.Generator(device=OTHER).manual_seed(99)
    assert torch.equal(torch.randn(16, device=OTHER, generator=other).cpu(), a)


def test_negative_control_random_fill(unguarded):
    x = torch.empty(8, device=DEVICE)
    torch_fl.sim.reset_stats()
    with rejected():
        x.normal_()


def test_dropout_masks_alike_on_two_devices_and_runs_on_device():
    x = torch.randn(4, 32)
    torch.manual_seed(11)
    dx = x.to(DEVICE).requires_grad_()
    torch_fl.sim.reset_stats()
    out = torch.nn.functional.dropout(dx, 0.25, training=True)
    out.sum().backward()
    assert_clean(out, dx.grad, ops=["aclnnInplaceBernoulli", "aclnnMul"])
    kept = out.detach().cpu() != 0
    torch.testing.assert_close(out.detach().cpu()[kept], (x / 0.75)[kept])
    torch.testing.assert_close(dx.grad.cpu(), kept.float() / 0.75)
    assert 0.5 < kept.float().mean() < 0.95
    torch.manual_seed(11)
    other = torch.nn.functional.dropout(x.to(OTHER), 0.25, training=True)
    assert torch.equal(other.cpu(), out.detach().cpu())
    assert torch.equal(torch.nn.functional.dropout(dx, 0.25, training=False).detach().cpu(), x)


# ---- randperm --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32, torch.float16])
def test_randperm_is_a_permutation_on_its_device(dtype):
    torch_fl.sim.reset_stats()
    out = torch.randperm(100, dtype=dtype, device=DEVICE)
    assert_clean(out, ops=["aclnnRandperm"])
    assert out.dtype == dtype
    assert sorted(out.cpu().long().tolist()) == list(range(100))


def test_randperm_seeds_and_edge_sizes():
    torch.manual_seed(7)
    first = torch.randperm(50, device=DEVICE).cpu()
    torch.manual_seed(7)
    assert torch.equal(first, torch.randperm(50, device=OTHER).cpu())  # same seed, same draw on another device
    assert not torch.equal(torch.randperm(50, device=OTHER).cpu(), first)  # the offset advanced
    assert torch.randperm(0, device=DEVICE).shape == (0,)
    assert torch.randperm(1, device=DEVICE).cpu().tolist() == [0]
    out = torch.empty(3, dtype=torch.long, device=DEVICE)
    torch.randperm(6, out=out)
    assert sorted(out.cpu().tolist()) == list(range(6))


def test_randperm_checks_at_the_call():
    with pytest.raises(RuntimeError, match="n must be non-negative"):
        torch.randperm(-1, out=torch.empty(0, dtype=torch.long, device=DEVICE))
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type"):
        torch.randperm(3000, dtype=torch.half, device=DEVICE)


def test_negative_control_randperm(unguarded):
    out = torch.empty(5, dtype=torch.long, device=DEVICE)
    torch_fl.sim.reset_stats()
    with rejected():
        torch.ops.aten.randperm.generator_out(5, generator=None, out=out)
