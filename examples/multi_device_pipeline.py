"""A diffusion-style pipeline split over flagos:0..3, with no set_device call.

The denoiser is four transformer shards, one per device; activations move
between shards with ``.to()``. The pipeline runs its denoising loop inside
``torch.flagos.device(execution_device)`` (the last shard's device, as
pipelines pick an "execution device"), while the latents and the
flow-matching Euler scheduler live on the VAE's device, flagos:0. So every
scheduler step runs on tensors of flagos:0 while flagos:3 is current: the
situation in which upstream torch_fl launched ACLNN operators on the wrong
device and produced NaN.

    python examples/multi_device_pipeline.py            # guarded: matches the CPU
    python examples/multi_device_pipeline.py --no-guards  # upstream behaviour: fails

``--no-guards`` uses the diagnostic switch that turns the injected device
guards off (for negative controls only). With ``--mismatch nan`` the
simulator lets mismatched launches "succeed" with NaN outputs, as the 910C did.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_fl

DIM, HEADS, TOKENS, STEPS = 32, 4, 16, 6


class Block(nn.Module):
    """Pre-norm transformer block conditioned on the timestep."""

    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.norm2 = nn.LayerNorm(DIM)
        self.mlp_in = nn.Linear(DIM, 4 * DIM)
        self.mlp_out = nn.Linear(4 * DIM, DIM)
        self.time = nn.Linear(DIM, DIM)

    def forward(self, x: torch.Tensor, t_emb: torch.Tensor) -> torch.Tensor:
        x = x + self.time(t_emb)[:, None, :]
        b, n, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(DIM // HEADS), dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, n, DIM))
        return x + self.mlp_out(F.gelu(self.mlp_in(self.norm2(x))))


def timestep_embedding(t: torch.Tensor) -> torch.Tensor:
    half = DIM // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    angles = t[:, None] * freqs[None, :]
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class ShardedDenoiser(nn.Module):
    """Four blocks; block i lives on devices[i]."""

    def __init__(self, devices):
        super().__init__()
        self.devices = list(devices)
        self.blocks = nn.ModuleList(Block().to(d) for d in self.devices)

    def forward(self, latents: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        x = latents
        for device, block in zip(self.devices, self.blocks):
            x = x.to(device)
            x = block(x, timestep_embedding(t.to(device)))
        return x


class FlowMatchEulerScheduler:
    """Euler steps of a flow-matching ODE: x <- x + (sigma_next - sigma) * v."""

    def __init__(self, steps: int, device):
        self.sigmas = torch.linspace(1.0, 0.0, steps + 1, device=device)

    def step(self, velocity: torch.Tensor, index: int, latents: torch.Tensor) -> torch.Tensor:
        dt = self.sigmas[index + 1] - self.sigmas[index]
        return latents + dt * velocity.to(latents.device)


def run(devices, vae_device, execution_device, seed: int = 0) -> torch.Tensor:
    torch.manual_seed(seed)
    model = ShardedDenoiser(devices)
    latents = torch.randn(2, TOKENS, DIM).to(vae_device)
    scheduler = FlowMatchEulerScheduler(STEPS, vae_device)
    placement = (torch.flagos.device(execution_device) if execution_device is not None
                 else contextlib.nullcontext())
    with torch.no_grad(), placement:
        for i in range(STEPS):
            t = scheduler.sigmas[i].expand(latents.shape[0]) * 1000.0
            velocity = model(latents, t)
            latents = scheduler.step(velocity, i, latents)
    return latents.cpu()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-guards", action="store_true", help="turn the device guards off (negative control)")
    parser.add_argument("--mismatch", choices=["error", "nan"], default="error",
                        help="what the simulator does with a mismatched launch")
    args = parser.parse_args(argv)

    flagos = [torch.device("flagos", i) for i in range(4)]
    expected = run(["cpu"] * 4, "cpu", None)

    torch_fl.sim.set_mismatch_mode(args.mismatch)
    torch_fl._C._set_guards_enabled(not args.no_guards)
    if args.no_guards:
        # Let the simulator itself judge the launches, as real hardware would.
        torch_fl._C._set_device_check(False)
    torch_fl.sim.reset_stats()
    try:
        result = run(flagos, flagos[0], flagos[3])
    except RuntimeError as error:
        print(f"FAILED: {error}".splitlines()[0])
        return 1
    finally:
        stats = torch_fl.sim.stats()
        print("launches per device:", dict(sorted(stats["launches"].items())))
        print("rejected launches:", stats["rejected_launches"])
        print("mismatched launches:", stats["mismatched_launches"])
        print("ops on the CPU fallback:", len(stats["fallback_ops"]))
        print("current device after the run:", torch.flagos.current_device())

    finite = bool(torch.isfinite(result).all())
    max_diff = (result - expected).abs().max().item() if finite else float("nan")
    print(f"finite: {finite}, max |flagos - cpu|: {max_diff:.3g}")
    ok = finite and torch.allclose(result, expected, rtol=1e-4, atol=1e-5)
    print("OK: matches the CPU run" if ok else "FAILED: differs from the CPU run")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
