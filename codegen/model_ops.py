"""The ATen ops a set of common models dispatches, for `--report --uncovered`.

`codegen/model_ops.txt` lists, for each overload, the models that reach it.
It is recorded on flagos:0 by running each model's training step (forward,
loss, backward, optimizer step) under a TorchDispatchMode, i.e. the ops the
flagos backend sees after autograd and composite decompositions. Not on the
CPU: the CPU reaches other ops (nn.LSTM, for one, runs fused CPU kernels
that a flagos device never sees), so a CPU recording would call ops covered
that models still send to the fallback. It needs the built backend (the
simulator is enough). Refresh it after a torch upgrade, a change of the
model set or of the backend's composite kernels with

    python -m codegen.model_ops

An op of the list is uncovered when the flagos backend has no kernel for it
(no entry of the registry) and torch has no
kernel that runs on every backend (CompositeExplicitAutograd, ...): such an
op falls back to the CPU (or raises under FLAGOS_STRICT=1).
"""

from __future__ import annotations

import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_OPS = os.path.join(HERE, "model_ops.txt")

# Dispatch keys whose kernel serves every backend.
_EVERYWHERE = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd")


def load(path: str = MODEL_OPS) -> dict[str, list[str]]:
    """overload -> the models that dispatch it."""
    ops: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#"):
                op, _, models = line.partition(" ")
                ops[op] = models.strip().split(",") if models.strip() else []
    return ops


def backend_registrations(registry) -> set[str]:
    """Ops registered for PrivateUse1 with ATen's own kernels or csrc/aten/ bodies
    (yaml/aten.yaml, yaml/composite.yaml: allocation, views, composite guards, ...)."""
    return ({entry.op for entry in registry.aten if entry.key == "PrivateUse1"}
            | {entry.op for entry in registry.composite if "PrivateUse1" in entry.keys})


def runs_everywhere(raw_entry: dict | None) -> bool:
    """Whether native_functions.yaml gives the op a kernel for every backend."""
    if raw_entry is None:
        return False
    dispatch = raw_entry.get("dispatch")
    if not dispatch:
        return True  # no dispatch section: CompositeImplicitAutograd
    keys = {key.strip() for keys in dispatch for key in str(keys).split(",")}
    return any(key in keys for key in _EVERYWHERE)


# ---- recording the list ------------------------------------------------------

def _models():
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 10))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):  # a residual conv block, ResNet style
        def __init__(self, c):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            return F.relu(x + self.bn2(self.conv2(y)))

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.MaxPool2d(2))
            self.block = Block(8)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            x = F.adaptive_avg_pool2d(self.block(self.stem(x)), 1)
            return self.head(torch.flatten(x, 1))

    class Gpt(nn.Module):  # decoder-only transformer
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(32, 16), nn.Embedding(8, 16)
            self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, activation="gelu", batch_first=True,
                                                    norm_first=True)
            self.norm, self.head = nn.LayerNorm(16), nn.Linear(16, 32)

        def forward(self, tokens):
            t = tokens.shape[1]
            x = self.tok(tokens) + self.pos(torch.arange(t, device=tokens.device))
            mask = torch.triu(torch.full((t, t), float("-inf"), device=tokens.device), diagonal=1)
            return self.head(self.norm(self.layer(x, src_mask=mask, is_causal=True)))

    class Rnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])

    class UNet(nn.Module):  # encoder-decoder with upsampling and skip concatenation
        def __init__(self):
            super().__init__()
            self.down = nn.Conv2d(3, 8, 3, padding=1)
            self.mid = nn.Conv2d(8, 8, 3, padding=1)
            self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
            self.out = nn.Conv2d(16, 1, 1)

        def forward(self, x):
            d = F.silu(self.down(x))
            m = F.silu(self.mid(F.avg_pool2d(d, 2)))
            u = F.interpolate(m, scale_factor=2, mode="bilinear", align_corners=False) + self.up(m)
            return self.out(torch.cat([d, u], dim=1))

    def ce(out, target):
        return F.cross_entropy(out, target)

    def lm(out, target):
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))

    def mse(out, target):
        return F.mse_loss(out, target)

    def bce(out, target):
        return F.binary_cross_entropy_with_logits(out, target)

    g = torch.Generator().manual_seed(0)
    return [
        ("mlp", Mlp(), torch.randn(4, 16, generator=g), torch.randint(0, 10, (4,), generator=g), ce, "sgd"),
        ("cnn", Cnn(), torch.randn(2, 3, 16, 16, generator=g), torch.randint(0, 10, (2,), generator=g), ce, "sgd"),
        ("gpt", Gpt(), torch.randint(0, 32, (2, 8), generator=g), torch.randint(0, 32, (2, 8), generator=g), lm,
         "adamw"),
        ("lstm", Rnn(), torch.randn(2, 5, 8, generator=g), torch.randn(2, 4, generator=g), mse, "adam"),
        ("unet", UNet(), torch.randn(2, 3, 8, 8, generator=g), torch.rand(2, 1, 8, 8, generator=g), bce, "adam"),
    ]


def record(device: str = "flagos:0") -> dict[str, list[str]]:
    """Runs each model's training step on `device` and returns overload -> models."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    if device.startswith("flagos"):
        import torch_fl  # noqa: F401  (registers the device)

    seen: dict[str, set[str]] = {}

    class Record(TorchDispatchMode):
        def __init__(self, model: str):
            super().__init__()
            self.model = model

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            schema = func._schema
            if schema.name.startswith("aten::"):
                name = schema.name[len("aten::"):] + (f".{schema.overload_name}" if schema.overload_name else "")
                seen.setdefault(name, set()).add(self.model)
            return func(*args, **(kwargs or {}))

    optimizers = {"sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
                  "adam": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=True),
                  "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=True)}
    for name, model, x, target, loss_fn, opt in _models():
        model, x, target = model.to(device), x.to(device), target.to(device)
        optimizer = optimizers[opt](model.parameters())
        with Record(name):
            model.train()
            loss = loss_fn(model(x), target)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            model.eval()
            with torch.no_grad():
                model(x)
    return {op: sorted(models) for op, models in sorted(seen.items())}


def main() -> int:
    import torch

    ops = record()
    with open(MODEL_OPS, "w", encoding="utf-8") as handle:
        handle.write(f"# ATen overloads that common models dispatch (codegen/model_ops.py), torch {torch.__version__}.\n"
                     "# Recorded on flagos:0 (what the backend receives): forward, loss, backward,\n"
                     "# optimizer step, eval forward of\n"
                     "# mlp (Linear, ReLU, Dropout, SGD), cnn (ResNet block: Conv2d, BatchNorm2d, MaxPool2d),\n"
                     "# gpt (Embedding, pre-norm TransformerEncoderLayer with a causal mask, GELU, AdamW),\n"
                     "# lstm (LSTM, MSE, Adam), unet (ConvTranspose2d, bilinear upsampling, cat, BCE-with-logits).\n"
                     "# Refresh: python -m codegen.model_ops\n")
        for op, models in ops.items():
            handle.write(f"{op} {','.join(models)}\n")
    print(f"{len(ops)} overloads written to {os.path.relpath(MODEL_OPS)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
