"""diffusers' UNet2DConditionModel and AutoencoderKL, as in a Stable-Diffusion
denoising step and the final decode: on flagos, split over devices, equal to
the CPU."""

from __future__ import annotations

import copy

import pytest
import torch

import torch_fl

from .common import assert_close, dispatch, devices_of

diffusers = pytest.importorskip("diffusers")


def small_unet():
    torch.manual_seed(0)
    return diffusers.UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=8, attention_head_dim=2, norm_num_groups=4).eval()


def small_vae():
    torch.manual_seed(1)
    return diffusers.AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 2,
                                   up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(8, 16),
                                   latent_channels=4, norm_num_groups=4, sample_size=16).eval()


def inputs():
    g = torch.Generator().manual_seed(2)
    return torch.randn(1, 4, 8, 8, generator=g), torch.tensor([10]), torch.randn(1, 3, 8, generator=g)


def test_unet_on_one_device():
    unet = small_unet()
    latents, t, text = inputs()
    with torch.no_grad():
        expected = unet(latents, t, text).sample
        ours = copy.deepcopy(unet).to("flagos:1")
        out = ours(latents.to("flagos:1"), t.to("flagos:1"), text.to("flagos:1")).sample
    assert out.device == torch.device("flagos:1")
    assert_close(out, expected, atol=1e-4)


def test_unet_split_and_vae_on_a_third_device():
    unet, vae = small_unet(), small_vae()
    latents, t, text = inputs()
    with torch.no_grad():
        expected = vae.decode(unet(latents, t, text).sample).sample
        split = dispatch(copy.deepcopy(unet), {
            "conv_in": "flagos:1", "time_proj": "flagos:1", "time_embedding": "flagos:1", "down_blocks": "flagos:1",
            "mid_block": "flagos:2", "up_blocks": "flagos:2", "conv_norm_out": "flagos:2", "conv_act": "flagos:2",
            "conv_out": "flagos:2"})
        assert devices_of(split) == {"flagos:1", "flagos:2"}
        decoder = copy.deepcopy(vae).to("flagos:3")
        noise = split(latents.to("flagos:1"), t.to("flagos:1"), text.to("flagos:1")).sample
        image = decoder.decode(noise.to("flagos:3")).sample
    assert image.device == torch.device("flagos:3")
    assert_close(image, expected, atol=1e-4)


def test_vae_round_trip_and_backward():
    vae = small_vae()
    image = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(4))
    expected = vae(image).sample
    expected.square().mean().backward()
    ours = copy.deepcopy(small_vae()).to("flagos:2")
    out = ours(image.to("flagos:2")).sample
    out.square().mean().backward()
    assert_close(out, expected, atol=1e-4)
    for (name, p), q in zip(ours.named_parameters(), vae.parameters()):
        assert_close(p.grad, q.grad, atol=5e-4, rtol=1e-3, what=name)


def test_diffusion_training_step():
    """What diffusers' training scripts do: noise the latents with the DDPM
    scheduler, predict the noise, F.mse_loss, AdamW; on flagos:1, twice."""
    scheduler = diffusers.DDPMScheduler(num_train_timesteps=100)
    latents, _, text = inputs()
    noise = torch.randn(latents.shape, generator=torch.Generator().manual_seed(5))
    t = torch.tensor([37])
    reference = small_unet().train()
    ours = copy.deepcopy(reference).to("flagos:1")
    losses = {}
    for model, device in ((reference, "cpu"), (ours, "flagos:1")):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        losses[device] = []
        for _ in range(2):
            noisy = scheduler.add_noise(latents.to(device), noise.to(device), t.to(device))
            prediction = model(noisy, t.to(device), text.to(device)).sample
            loss = torch.nn.functional.mse_loss(prediction, noise.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses[device].append(loss.item())
    assert_close(torch.tensor(losses["flagos:1"]), torch.tensor(losses["cpu"]), atol=1e-5, what="losses")
    for (name, p), q in zip(ours.named_parameters(), reference.parameters()):
        assert_close(p, q, atol=1e-4, rtol=1e-4, what=name)
