"""The seed's showcase at small scale: Qwen-Image over four flagos devices.

diffusers' own Qwen-Image models, built from small configs (no download):
the transformer split over flagos:1 and flagos:2 (accelerate's
dispatch_model: forward pre-hooks move the activations), the flow-matching
Euler scheduler with the latents on flagos:3, and the VAE decoding on
flagos:0, the current device, with no set_device call and no Python context
hook anywhere. Upstream, the first scheduler step after the last shard ran
on the wrong device and gave NaN.

    python examples/qwen_image_showcase.py          # runs, prints the counts, checks the CPU result
    python examples/qwen_image_showcase.py --steps 4

Strict mode is on: an op without a flagos kernel fails instead of running on
the CPU. The script prints launches per device, set-device calls and ops on
the CPU fallback (0), and exits 1 unless the image matches the CPU's.
"""

from __future__ import annotations

import argparse
import copy
import sys
import warnings

import torch

import torch_fl

warnings.filterwarnings("ignore", category=FutureWarning)

HEIGHT = WIDTH = 8  # latent pixels: the VAE decodes them to a 16x16 RGB image
TEXT_TOKENS = 5


def build_models():
    """The transformer, the VAE and the scheduler, on the CPU, with fixed weights."""
    from diffusers import AutoencoderKLQwenImage, FlowMatchEulerDiscreteScheduler, QwenImageTransformer2DModel

    torch.manual_seed(0)
    transformer = QwenImageTransformer2DModel(
        patch_size=2, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=16, guidance_embeds=False, axes_dims_rope=(8, 4, 4)).eval()
    vae = AutoencoderKLQwenImage(base_dim=16, z_dim=4, dim_mult=[1, 2], num_res_blocks=1,
                                 temperal_downsample=[False]).eval()
    return transformer, vae, FlowMatchEulerDiscreteScheduler()


def pack(latents: torch.Tensor) -> torch.Tensor:
    """(B, C, 1, H, W) -> (B, H/2 * W/2, C * 4): the transformer's 2x2 patches."""
    b, c, _, h, w = latents.shape
    return latents.view(b, c, h // 2, 2, w // 2, 2).permute(0, 2, 4, 1, 3, 5).reshape(b, (h // 2) * (w // 2), c * 4)


def unpack(packed: torch.Tensor, channels: int = 4) -> torch.Tensor:
    b = packed.shape[0]
    h, w = HEIGHT // 2, WIDTH // 2
    return packed.view(b, h, w, channels, 2, 2).permute(0, 3, 1, 4, 2, 5).reshape(b, channels, 1, HEIGHT, WIDTH)


def generate(transformer, vae, scheduler, steps: int, latent_device: str, vae_device: str) -> torch.Tensor:
    """The denoising loop as QwenImagePipeline runs it, then the VAE decode."""
    g = torch.Generator().manual_seed(1)
    text = torch.randn(1, TEXT_TOKENS, 16, generator=g)
    latents = pack(torch.randn(1, 4, 1, HEIGHT, WIDTH, generator=g)).to(latent_device)
    mask = torch.ones(1, TEXT_TOKENS)
    scheduler.set_timesteps(steps, device=latent_device)
    with torch.no_grad():
        for t in scheduler.timesteps:
            timestep = (t / 1000).expand(latents.shape[0]).to(latents.dtype)
            noise = transformer(hidden_states=latents, encoder_hidden_states=text.to(latents.device),
                                encoder_hidden_states_mask=mask.to(latents.device), timestep=timestep,
                                img_shapes=[(1, HEIGHT // 2, WIDTH // 2)], return_dict=False)[0]
            # The last shard's output, on the latents' device: the step the seed's bug broke.
            latents = scheduler.step(noise.to(latents.device), t, latents, return_dict=False)[0]
        return vae.decode(unpack(latents).to(vae_device), return_dict=False)[0]


def split_transformer(transformer):
    from accelerate import dispatch_model

    # main_device: where the top-level hook puts the inputs. The text mask is used
    # before the first block with the text states, which txt_norm's hook moves to
    # flagos:1, so the inputs start there (as they would on CUDA).
    return dispatch_model(transformer, main_device="flagos:1", device_map={
        "pos_embed": "flagos:1", "time_text_embed": "flagos:1", "txt_norm": "flagos:1", "img_in": "flagos:1",
        "txt_in": "flagos:1", "transformer_blocks.0": "flagos:1",
        "transformer_blocks.1": "flagos:2", "norm_out": "flagos:2", "proj_out": "flagos:2"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args(argv)

    transformer, vae, scheduler = build_models()
    expected = generate(copy.deepcopy(transformer), copy.deepcopy(vae), copy.deepcopy(scheduler), args.steps,
                        "cpu", "cpu")

    torch.flagos.set_device(0)
    split = split_transformer(copy.deepcopy(transformer))
    decoder = copy.deepcopy(vae).to("flagos:0")
    torch_fl._C._set_strict(True)
    torch_fl._C._reset_fallback_counts()
    torch_fl.sim.reset_stats()
    image = generate(split, decoder, copy.deepcopy(scheduler), args.steps, "flagos:3", "flagos:0")
    stats = torch_fl.sim.stats()
    fallback = sum(torch_fl._C._fallback_counts().values())

    print("transformer on flagos:1 and flagos:2, scheduler on flagos:3, VAE on flagos:0; flagos:0 current")
    print("launches per device:", {f"flagos:{d}": n for d, n in stats["launches"].items() if n})
    print("set-device calls:", stats["set_device_calls"])
    print("rejected launches:", stats["rejected_launches"])
    print("ops on the CPU fallback:", fallback)
    print("current device after:", torch.flagos.current_device())
    difference = (image.cpu() - expected).abs().max().item()
    finite = bool(torch.isfinite(image.cpu()).all())
    print(f"image {tuple(image.shape)} on {image.device}; finite: {finite}; max |flagos - cpu| = {difference:.2e}")
    if finite and difference < 1e-4 and fallback == 0 and torch.flagos.current_device() == 0:
        print("OK: matches the CPU run")
        return 0
    print("FAILED")
    return 1


if __name__ == "__main__":
    sys.exit(main())
