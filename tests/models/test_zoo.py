"""More real models, forward only, on flagos:1 while flagos:0 is current, in
strict mode, against the CPU: the architectures users bring (decoder and
encoder LMs, encoder-decoder generation, vision and speech encoders, the
diffusion transformers and video VAE of current pipelines). Each is built
from a small config of its library, with no download."""

from __future__ import annotations

import copy

import pytest
import torch

from .common import assert_close

transformers = pytest.importorskip("transformers")
diffusers = pytest.importorskip("diffusers")

DEVICE = "flagos:1"


def _gen():
    return torch.Generator().manual_seed(1)


def tokens(batch=2, length=6):
    return torch.randint(0, 64, (batch, length), generator=_gen())


def greedy(model, ids):
    return model.generate(ids, max_new_tokens=4, do_sample=False)


LM = dict(vocab_size=64)


def transformers_models():
    t = transformers
    yield "gpt2", lambda: t.GPT2LMHeadModel(t.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=32,
                                                         bos_token_id=0, eos_token_id=0, **LM)), \
        lambda m, d: m(tokens().to(d)).logits
    yield "bert", lambda: t.BertForMaskedLM(t.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                                         intermediate_size=64, max_position_embeddings=32, **LM)), \
        lambda m, d: m(tokens().to(d)).logits
    yield "t5 generate", lambda: t.T5ForConditionalGeneration(t.T5Config(d_model=32, d_ff=64, num_layers=2, num_heads=4,
                                                                         d_kv=8, decoder_start_token_id=0, **LM)), \
        lambda m, d: greedy(m, tokens(length=5).to(d))
    yield "qwen2 generate", lambda: t.Qwen2ForCausalLM(t.Qwen2Config(hidden_size=32, intermediate_size=64,
                                                                     num_hidden_layers=2, num_attention_heads=4,
                                                                     num_key_value_heads=2, **LM)), \
        lambda m, d: greedy(m, tokens(length=5).to(d))
    yield "mistral generate", lambda: t.MistralForCausalLM(t.MistralConfig(hidden_size=32, intermediate_size=64,
                                                                           num_hidden_layers=2, num_attention_heads=4,
                                                                           num_key_value_heads=2, **LM)), \
        lambda m, d: greedy(m, tokens(length=5).to(d))
    yield "vit", lambda: t.ViTForImageClassification(t.ViTConfig(hidden_size=32, num_hidden_layers=2,
                                                                 num_attention_heads=4, intermediate_size=64,
                                                                 image_size=16, patch_size=4, num_labels=3)), \
        lambda m, d: m(torch.randn(2, 3, 16, 16, generator=_gen()).to(d)).logits
    yield "clip text", lambda: t.CLIPTextModelWithProjection(t.CLIPTextConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=16,
        **LM)), lambda m, d: m(tokens().to(d)).text_embeds
    yield "whisper generate", lambda: t.WhisperForConditionalGeneration(t.WhisperConfig(
        d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8, max_source_positions=16, max_target_positions=16,
        pad_token_id=1, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, **LM)), \
        lambda m, d: m.generate(torch.randn(1, 8, 32, generator=_gen()).to(d), max_new_tokens=3)


def _flux_inputs(d):
    r = _gen()
    return dict(hidden_states=torch.randn(1, 16, 16, generator=r).to(d),
                encoder_hidden_states=torch.randn(1, 4, 16, generator=r).to(d),
                pooled_projections=torch.randn(1, 16, generator=r).to(d), timestep=torch.tensor([0.5]).to(d),
                img_ids=torch.zeros(16, 3).to(d), txt_ids=torch.zeros(4, 3).to(d), return_dict=False)


def _sd3_inputs(d):
    r = _gen()
    return dict(hidden_states=torch.randn(1, 4, 8, 8, generator=r).to(d),
                encoder_hidden_states=torch.randn(1, 4, 16, generator=r).to(d),
                pooled_projections=torch.randn(1, 16, generator=r).to(d), timestep=torch.tensor([3]).to(d),
                return_dict=False)


def _wan_inputs(d):
    r = _gen()
    return dict(hidden_states=torch.randn(1, 4, 2, 8, 8, generator=r).to(d), timestep=torch.tensor([3]).to(d),
                encoder_hidden_states=torch.randn(1, 4, 16, generator=r).to(d), return_dict=False)


def diffusers_models():
    D = diffusers
    yield "flux transformer", lambda: D.FluxTransformer2DModel(
        patch_size=1, in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=8, num_attention_heads=2,
        joint_attention_dim=16, pooled_projection_dim=16, axes_dims_rope=(2, 2, 4)), \
        lambda m, d: m(**_flux_inputs(d))[0]
    yield "sd3 transformer", lambda: D.SD3Transformer2DModel(
        sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=2,
        joint_attention_dim=16, caption_projection_dim=16, pooled_projection_dim=16, out_channels=4,
        pos_embed_max_size=16), lambda m, d: m(**_sd3_inputs(d))[0]
    yield "wan transformer", lambda: D.WanTransformer3DModel(
        patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4, text_dim=16,
        freq_dim=16, ffn_dim=32, num_layers=1, rope_max_seq_len=32), lambda m, d: m(**_wan_inputs(d))[0]
    yield "wan vae", lambda: D.AutoencoderKLWan(base_dim=8, z_dim=4, dim_mult=[1, 2], num_res_blocks=1,
                                                temperal_downsample=[False]), \
        lambda m, d: m(torch.randn(1, 3, 1, 16, 16, generator=_gen()).to(d), return_dict=False)[0]


MODELS = list(transformers_models()) + list(diffusers_models())


@pytest.mark.parametrize("build, run", [m[1:] for m in MODELS], ids=[m[0] for m in MODELS])
def test_forward_matches_the_cpu(build, run):
    torch.manual_seed(0)
    model = build().eval()
    with torch.no_grad():
        expected = run(model, "cpu")
        ours = run(copy.deepcopy(model).to(DEVICE), DEVICE)
    assert ours.device == torch.device(DEVICE)
    if expected.dtype.is_floating_point:
        assert_close(ours, expected, atol=1e-4, rtol=1e-4)
    else:  # generated token ids
        assert torch.equal(ours.cpu(), expected)


TRAINED = ("bert", "vit", "clip text", "flux transformer")


@pytest.mark.parametrize("build, run", [m[1:] for m in MODELS if m[0] in TRAINED],
                         ids=[m[0] for m in MODELS if m[0] in TRAINED])
def test_gradients_match_the_cpu(build, run):
    """Backward too (CLIP's pooled output takes index's backward, an accumulating index_put)."""
    torch.manual_seed(0)
    model = build().train()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    ours = copy.deepcopy(model).to(DEVICE)
    run(model, "cpu").pow(2).mean().backward()
    run(ours, DEVICE).pow(2).mean().backward()
    for (name, p), q in zip(ours.named_parameters(), model.parameters()):
        if q.grad is not None:
            assert_close(p.grad, q.grad, atol=1e-5, rtol=1e-4, what=name)
