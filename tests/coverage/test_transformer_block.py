"""A small transformer block trained for a few steps on flagos devices that
are not the current one: embedding, causal self-attention (matmul, triu mask,
masked_fill, softmax), layer norm, an MLP with GELU, cross-entropy, backward
and an optimizer step.

- On one device (flagos:1 while flagos:0 is current) every op must have a
  flagos kernel: no CPU fallback (the assertion lists the ops that still fall
  back), no launch on the current device, the CPU's loss and parameters.
- Split over two devices (attention on flagos:1, MLP and head on flagos:2,
  flagos:0 current) the block gives the CPU's loss and parameters too.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

torch_fl = pytest.importorskip("torch_fl")

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 3, reason="needs three flagos devices")

VOCAB, DIM, HEADS, BATCH, SEQ = 16, 8, 2, 2, 5


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.norm = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, tokens):
        x = self.embed(tokens)
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (y.view(b, t, HEADS, d // HEADS).transpose(1, 2) for y in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) / (d // HEADS) ** 0.5
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
        attention = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
        y = torch.matmul(attention, v).transpose(1, 2).reshape(b, t, d)
        return x + self.proj(y)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.fc1 = nn.Linear(DIM, 4 * DIM)
        self.fc2 = nn.Linear(4 * DIM, DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, x):
        x = x + self.fc2(F.gelu(self.fc1(self.norm(x))))
        return self.head(x)


def make_block():
    torch.manual_seed(0)
    return Attention(), Mlp()


def data():
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
    targets = torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
    return tokens, targets


def train(attention, mlp, devices, optimizer_cls, steps=2):
    """`steps` optimizer steps; the inputs live on the CPU and are moved to
    each half's device, as a model-parallel loop does. Returns the losses."""
    params = list(attention.parameters()) + list(mlp.parameters())
    optimizer = optimizer_cls(params)
    tokens, targets = data()
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        hidden = attention(tokens.to(devices[0]))
        logits = mlp(hidden.to(devices[1]))
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1).to(devices[1]))
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=False),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01, foreach=False),
}


def cpu_reference(optimizer_cls):
    attention, mlp = make_block()
    losses = train(attention, mlp, ("cpu", "cpu"), optimizer_cls)
    return losses, attention, mlp


def assert_matches_cpu(losses, modules, expected_losses, expected_modules):
    for loss, expected in zip(losses, expected_losses):
        torch.testing.assert_close(loss.cpu(), expected, rtol=1e-4, atol=1e-5)
    for module, expected in zip(modules, expected_modules):
        for (name, param), (_, reference) in zip(module.named_parameters(), expected.named_parameters()):
            torch.testing.assert_close(param.detach().cpu(), reference.detach(), rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_block_on_one_device_runs_without_fallback(optimizer):
    expected_losses, *expected_modules = cpu_reference(OPTIMIZERS[optimizer])
    attention, mlp = (copy.deepcopy(m).to("flagos:1") for m in make_block())
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    losses = train(attention, mlp, ("flagos:1", "flagos:1"), OPTIMIZERS[optimizer])
    stats = torch_fl.sim.stats()

    missing = sorted(stats["fallback_ops"])
    assert not missing, f"ops that still run on the CPU fallback: {', '.join(missing)}"
    assert torch.flagos.current_device() == 0
    assert stats["rejected_launches"] == 0
    assert stats["launches"][0] == 0, stats["launches"]  # nothing on the current device
    assert stats["launches"][1] > 0
    assert_matches_cpu(losses, (attention, mlp), expected_losses, expected_modules)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_block_split_over_two_devices_matches_cpu(optimizer):
    expected_losses, *expected_modules = cpu_reference(OPTIMIZERS[optimizer])
    attention, mlp = make_block()
    attention, mlp = attention.to("flagos:1"), mlp.to("flagos:2")
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    losses = train(attention, mlp, ("flagos:1", "flagos:2"), OPTIMIZERS[optimizer])
    stats = torch_fl.sim.stats()

    assert torch.flagos.current_device() == 0
    assert stats["rejected_launches"] == 0
    assert stats["launches"][0] == 0, stats["launches"]
    assert stats["launches"][1] > 0 and stats["launches"][2] > 0
    assert all(p.device == torch.device("flagos:1") for p in attention.parameters())
    assert all(p.device == torch.device("flagos:2") for p in mlp.parameters())
    assert_matches_cpu(losses, (attention, mlp), expected_losses, expected_modules)


def test_negative_control_block_without_guards_is_rejected():
    """The same forward with the guards off launches on the current device."""
    attention, _ = (m.to("flagos:1") for m in make_block())
    tokens, _ = data()
    tokens = tokens.to("flagos:1")
    torch_fl._C._set_guards_enabled(False)
    torch_fl._C._set_device_check(False)
    try:
        with pytest.raises(RuntimeError, match="lives on device 1 but the launch runs on device 0"):
            attention(tokens)
    finally:
        torch_fl._C._set_device_check(True)
        torch_fl._C._set_guards_enabled(True)
    assert torch_fl.sim.stats()["rejected_launches"] >= 1
