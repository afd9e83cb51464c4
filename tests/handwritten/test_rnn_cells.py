"""nn.LSTM, nn.GRU, nn.RNN and their cells on flagos (csrc/handwritten/rnn_cells.cc).

On a PrivateUse1 device ATen's RNNs call the fused cells (_thnn_fused_lstm_cell,
_thnn_fused_gru_cell and their backwards), which have no CPU kernel: before
these kernels even the CPU fallback failed. Everything runs in strict mode
(no op may run on the CPU fallback), on flagos:1 with flagos:0 current, and
matches the CPU, forward and backward."""

from __future__ import annotations

import copy

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

DEVICE = "flagos:1"


@pytest.fixture(autouse=True)
def strict():
    before = torch_fl._C._strict()
    torch_fl._C._set_strict(True)
    yield
    torch_fl._C._set_strict(before)


def _compare(module: torch.nn.Module, *inputs, tol=2e-5):
    """Forward and backward of `module` on the CPU and on flagos:1: outputs and gradients."""
    cpu = copy.deepcopy(module)
    dev = copy.deepcopy(module).to(DEVICE)
    out_cpu = cpu(*inputs)
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    out_dev = dev(*(x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in inputs))
    flat = lambda o: [t for t in (o if isinstance(o, tuple) else (o,)) for t in (t if isinstance(t, tuple) else (t,))]
    loss_cpu = sum(t.square().sum() for t in flat(out_cpu) if isinstance(t, torch.Tensor))
    loss_dev = sum(t.square().sum() for t in flat(out_dev) if isinstance(t, torch.Tensor))
    loss_cpu.backward()
    loss_dev.backward()
    stats = torch_fl.sim.stats()
    assert torch.flagos.current_device() == 0
    assert stats["fallback_ops"] == {} and stats["rejected_launches"] == 0
    assert stats["launches"].get(0, 0) == 0 and stats["launches"].get(1, 0) > 0, stats["launches"]
    for a, b in zip(flat(out_dev), flat(out_cpu)):
        if isinstance(a, torch.Tensor):
            assert a.device == torch.device(DEVICE)
            torch.testing.assert_close(a.cpu(), b, rtol=tol, atol=tol)
    for (name, p_dev), p_cpu in zip(dev.named_parameters(), cpu.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p_cpu.grad, rtol=tol, atol=tol, msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
@pytest.mark.parametrize("layers,bidirectional,bias", [(1, False, True), (2, True, True), (2, False, False)])
def test_lstm_and_gru(cls, layers, bidirectional, bias):
    torch.manual_seed(0)
    module = cls(5, 6, num_layers=layers, bidirectional=bidirectional, bias=bias, batch_first=True)
    _compare(module, torch.randn(3, 4, 5))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_elman_rnn(nonlinearity):
    torch.manual_seed(0)
    _compare(torch.nn.RNN(5, 6, num_layers=2, nonlinearity=nonlinearity), torch.randn(4, 3, 5))


def test_initial_states():
    torch.manual_seed(0)
    module = torch.nn.LSTM(5, 6, num_layers=2)
    h0, c0 = torch.randn(2, 3, 6), torch.randn(2, 3, 6)

    class WithState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = module

        def forward(self, x, h, c):
            return self.lstm(x, (h, c))

    _compare(WithState(), torch.randn(4, 3, 5), h0, c0)


@pytest.mark.parametrize("cls", [torch.nn.LSTMCell, torch.nn.GRUCell, torch.nn.RNNCell])
def test_cells(cls):
    torch.manual_seed(0)
    _compare(cls(5, 6), torch.randn(3, 5))


def test_packed_sequences():
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 6, batch_first=True)

    class Packed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lstm

        def forward(self, x):
            packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor([4, 2, 1]), batch_first=True)
            out, (h, c) = self.lstm(packed)
            padded, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
            return padded, h, c

    _compare(Packed(), torch.randn(3, 4, 5))


def test_a_few_training_steps_match_the_cpu():
    torch.manual_seed(0)
    model = torch.nn.GRU(5, 6, num_layers=2)
    x, target = torch.randn(7, 2, 5), torch.randn(7, 2, 6)
    results = []
    for device in ("cpu", DEVICE):
        m = copy.deepcopy(model).to(device)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x.to(device))[0], target.to(device))
            loss.backward()
            opt.step()
        results.append([p.detach().cpu() for p in m.parameters()])
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
