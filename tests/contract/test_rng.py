"""torch.flagos's random-number API, as torch.cuda's: a generator per device,
its state saved and restored per device and for all devices."""

from __future__ import annotations

import torch

import torch_fl  # noqa: F401


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
