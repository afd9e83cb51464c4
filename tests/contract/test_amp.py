"""torch.autocast("flagos") and torch.amp.GradScaler("flagos"), as with CUDA."""

from __future__ import annotations

import pytest
import torch

import torch_fl


@pytest.fixture
def strict():
    torch_fl._C._set_strict(True)
    yield
    torch_fl._C._set_strict(False)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_follows_cudas_lists(dtype, strict):
    x = torch.randn(4, 8, device="flagos:1")
    w = torch.randn(3, 8, device="flagos:1")
    assert dtype in torch.flagos.get_amp_supported_dtype()
    with torch.autocast("flagos", dtype=dtype):
        y = torch.nn.functional.linear(x, w)  # lower precision
        assert y.dtype == dtype
        assert torch.mm(x, w.t()).dtype == dtype
        assert torch.softmax(y, -1).dtype == torch.float32  # fp32 list
        assert torch.exp(y).dtype == torch.float32
        assert (x + 1).dtype == torch.float32  # in no list: as given
        assert torch.atan2(y, x[:, :3]).dtype == torch.float32  # promote: the widest input
    assert torch.mm(x, w.t()).dtype == torch.float32  # outside: no cast
    with torch.autocast("flagos", dtype=dtype), pytest.raises(RuntimeError, match="unsafe to autocast"):
        torch.nn.functional.binary_cross_entropy(torch.rand(3, device="flagos:1"), torch.rand(3, device="flagos:1"))


def _train(device: str, poison_step: int | None) -> tuple[float, list]:
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 3).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device.split(":")[0], init_scale=2.0 ** 10, growth_interval=2)
    x = torch.randn(4, 8).to(device)
    scales = []
    for step in range(5):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        if step == poison_step:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, [p.detach().cpu() for p in model.parameters()]


def test_grad_scaler_matches_the_cpu(strict):
    for poison in (None, 1):
        cpu_scales, cpu_params = _train("cpu", poison)
        flagos_scales, flagos_params = _train("flagos:2", poison)
        assert flagos_scales == cpu_scales
        for ours, theirs in zip(flagos_params, cpu_params):
            assert torch.allclose(ours, theirs, atol=1e-6)
    # With an inf at step 1 the scale backs off, then grows every 2 clean steps.
    assert _train("flagos:2", 1)[0] == [1024.0, 512.0, 512.0, 1024.0, 1024.0]
