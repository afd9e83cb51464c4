"""Module.to() on flagos as on CUDA: every Parameter keeps its identity, so
tied weights stay tied and an optimizer made before the move still updates
the model. PyTorch moves a Parameter in place only where
`torch._has_compatible_shallow_copy_type` allows it; without flagos's
answer it makes new Parameters and ties break without a word."""

from __future__ import annotations

import copy

import pytest
import torch

import torch_fl  # noqa: F401


class TiedLM(torch.nn.Module):
    """An embedding whose weight is also the output projection (GPT-2, T5, Llama with tie_word_embeddings)."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(16, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.head = torch.nn.Linear(8, 16, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(self.norm(self.embed(ids)))


@pytest.mark.parametrize("other", ["cpu", "flagos:0", "flagos:2"])
def test_compatible_shallow_copy_type(other):
    t = torch.zeros(3, device="flagos:1")
    assert torch._has_compatible_shallow_copy_type(t, torch.zeros(3, device=other))
    assert torch._has_compatible_shallow_copy_type(torch.zeros(3, device=other), t)


def test_not_compatible_with_a_sparse_tensor():
    t = torch.zeros(3, device="flagos:1")
    assert not torch._has_compatible_shallow_copy_type(t, torch.zeros(3).to_sparse())


@pytest.mark.parametrize("route", [["flagos:1"], ["flagos:1", "flagos:2"], ["flagos:1", "cpu"]])
def test_to_keeps_parameters_and_ties(route):
    model = TiedLM()
    params = list(model.parameters())
    for device in route:
        model.to(device)
    assert model.head.weight is model.embed.weight
    assert list(model.parameters()) == params  # the same objects, in the same order
    assert all(p.device == torch.device(route[-1]) for p in params)


def test_optimizer_made_before_the_move_trains_the_moved_model():
    torch.manual_seed(0)
    reference = TiedLM()
    model = copy.deepcopy(reference)
    ids = torch.tensor([[1, 2, 3, 2], [4, 5, 1, 0]])
    results = []
    for m, device in ((reference, "cpu"), (model, "flagos:1")):
        optimizer = torch.optim.AdamW(m.parameters(), lr=0.1)
        m.to(device)
        for _ in range(3):
            optimizer.zero_grad()
            m(ids.to(device)).pow(2).mean().backward()
            optimizer.step()
        results.append(m.embed.weight.detach().cpu())
    torch.testing.assert_close(results[1], results[0], atol=1e-5, rtol=1e-5)
    assert not torch.equal(results[1], TiedLM().embed.weight)  # it did train


def test_grad_moves_with_its_parameter():
    model = torch.nn.Linear(3, 2)
    model(torch.randn(4, 3)).sum().backward()
    weight, grad = model.weight, model.weight.grad.clone()
    model.to("flagos:1")
    assert model.weight is weight
    assert model.weight.grad.device == torch.device("flagos:1")
    torch.testing.assert_close(model.weight.grad.cpu(), grad)
