"""diffusers' Qwen-Image models, the seed's showcase: the transformer on one
device and split over two, the flow-matching scheduler on a third, the VAE
on a fourth (the current one), against the CPU; and the showcase example."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest
import torch

import torch_fl

from .common import assert_close, devices_of

pytest.importorskip("diffusers")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import qwen_image_showcase as showcase  # noqa: E402


@pytest.fixture(scope="module")
def models():
    return showcase.build_models()


def test_transformer_on_one_device(models):
    transformer, _, _ = models
    g = torch.Generator().manual_seed(5)
    latents = showcase.pack(torch.randn(1, 4, 1, 8, 8, generator=g))
    text, mask = torch.randn(1, 5, 16, generator=g), torch.ones(1, 5)
    kwargs = dict(timestep=torch.tensor([0.5]), img_shapes=[(1, 4, 4)], return_dict=False)
    with torch.no_grad():
        expected = transformer(hidden_states=latents, encoder_hidden_states=text, encoder_hidden_states_mask=mask,
                               **kwargs)[0]
        ours = copy.deepcopy(transformer).to("flagos:1")
        out = ours(hidden_states=latents.to("flagos:1"), encoder_hidden_states=text.to("flagos:1"),
                   encoder_hidden_states_mask=mask.to("flagos:1"),
                   **{**kwargs, "timestep": kwargs["timestep"].to("flagos:1")})[0]
    assert out.device == torch.device("flagos:1")
    assert_close(out, expected, atol=1e-4)


def test_denoising_loop_over_four_devices(models):
    transformer, vae, scheduler = models
    expected = showcase.generate(copy.deepcopy(transformer), copy.deepcopy(vae), copy.deepcopy(scheduler), 3,
                                 "cpu", "cpu")
    split = showcase.split_transformer(copy.deepcopy(transformer))
    assert devices_of(split) == {"flagos:1", "flagos:2"}
    torch_fl.sim.reset_stats()
    image = showcase.generate(split, copy.deepcopy(vae).to("flagos:0"), copy.deepcopy(scheduler), 3,
                              "flagos:3", "flagos:0")
    assert image.device == torch.device("flagos:0")
    assert_close(image, expected, atol=1e-4)
    launches = torch_fl.sim.stats()["launches"]
    assert all(launches[d] > 0 for d in range(4)), launches
    assert torch_fl.sim.stats()["rejected_launches"] == 0


def test_showcase_example_runs_clean():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "qwen_image_showcase.py")],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "ops on the CPU fallback: 0" in result.stdout
    assert "OK: matches the CPU run" in result.stdout


def test_vae_encodes_and_decodes_on_a_non_current_device(models):
    """AutoencoderKLQwenImage (causal 3-d convolutions, its own RMS norm, upsampling) on flagos:1."""
    _, vae, _ = models
    video = torch.randn(1, 3, 1, 16, 16, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        latents = vae.encode(video).latent_dist.mode()
        expected = vae.decode(latents, return_dict=False)[0]
        ours = copy.deepcopy(vae).to("flagos:1")
        our_latents = ours.encode(video.to("flagos:1")).latent_dist.mode()
        image = ours.decode(our_latents, return_dict=False)[0]
    assert image.device == torch.device("flagos:1")
    assert_close(our_latents, latents, atol=1e-4, what="latents")
    assert_close(image, expected, atol=1e-4, what="image")
