"""torch.flagos's random-number API, as torch.cuda's: a generator per device,
its state saved and restored per device and for all devices."""

from __future__ import annotations

import torch

import pytest

import torch_fl  # noqa: F401

DEVICE = "flagos:1"


def test_state_round_trip_replays_the_same_numbers():
    torch.flagos.manual_seed_all(123)
    state = torch.flagos.get_rng_state("flagos:1")
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    first = torch.rand(5, device="flagos:1").cpu()
    torch.flagos.set_rng_state(state, "flagos:1")
    assert torch.equal(torch.rand(5, device="flagos:1").cpu(), first)


def test_devices_have_their_own_generators():
    torch.flagos.manual_seed_all(7)
    states = torch.flagos.get_rng_state_all()
    assert len(states) == torch.flagos.device_count()
    a = torch.rand(3, device="flagos:0").cpu()
    b = torch.rand(3, device="flagos:3").cpu()
    assert torch.equal(a, b)  # seeded alike, drawn alike
    torch.rand(100, device="flagos:0")  # moves only device 0's offset
    torch.flagos.set_rng_state_all(states)
    assert torch.equal(torch.rand(3, device="flagos:3").cpu(), b)


def test_seeds():
    torch.flagos.set_device(2)
    torch.flagos.manual_seed(99)
    assert torch.flagos.initial_seed() == 99
    torch.flagos.seed()
    assert torch.flagos.initial_seed() != 99
    torch.manual_seed(5)  # seeds every flagos device too
    assert all(g.initial_seed() == 5 for g in torch.flagos.default_generators)
    torch.flagos.seed_all()
    torch.flagos.set_device(0)


# ---- the device-module contract of torch.utils.checkpoint and fork_rng ----------------


def _dropout_model(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.5), torch.nn.Linear(16, 4))
    return model.to(device)


def _grads(device, checkpoint: str | None, preserve_rng_state: bool = True):
    """The parameters' gradients of one step, with the middle of the model checkpointed or not."""
    from torch.utils.checkpoint import checkpoint as run_checkpointed

    model = _dropout_model(device)
    # Reentrant checkpointing needs an input that requires grad (as hidden states do).
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1)).to(device).requires_grad_()
    torch.manual_seed(123)  # the dropout mask comes from the device's generator
    if checkpoint is None:
        out = model(x)
    else:
        out = run_checkpointed(model, x, use_reentrant=checkpoint == "reentrant",
                               preserve_rng_state=preserve_rng_state)
    out.square().sum().backward()
    return [p.grad.cpu() for p in model.parameters()]


@pytest.mark.parametrize("mode", ["reentrant", "non-reentrant"])
def test_checkpoint_with_dropout_gives_the_uncheckpointed_gradients(mode):
    # torch.utils.checkpoint saves the device's RNG state only if the device
    # module says it is initialized (torch.flagos._initialized): the
    # recomputed forward then draws the same dropout mask.
    expected = _grads(DEVICE, None)
    for got, want in zip(_grads(DEVICE, mode), expected):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("mode", ["reentrant", "non-reentrant"])
def test_checkpoint_without_the_rng_state_differs(mode):
    # Negative control: the same run without the saved RNG state draws another
    # mask in the recomputation, and the gradients differ.
    expected = _grads(DEVICE, None)
    got = _grads(DEVICE, mode, preserve_rng_state=False)
    assert any(not torch.allclose(g, w) for g, w in zip(got, expected))


def test_fork_rng_restores_the_flagos_generator():
    torch.manual_seed(7)
    before = torch.rand(4, device=DEVICE).cpu()
    torch.manual_seed(7)
    with torch.random.fork_rng(device_type="flagos"):
        torch.rand(4, device=DEVICE)  # advances the device's generator inside only
    after = torch.rand(4, device=DEVICE).cpu()
    torch.testing.assert_close(after, before)
