"""_transformer_encoder_layer_fwd (csrc/handwritten/transformer_encoder_layer.cc),
nn.TransformerEncoderLayer's inference fast path, composed of flagos ops, on
flagos:2 while flagos:0 is current, against ATen's CPU kernel: post- and
pre-norm, gelu and relu, the three mask types, queries with every key
hidden, an empty batch, the checks at the call, and the guards-off negative control."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, needs_devices, rejected

pytestmark = needs_devices

EMBED, HEADS, FFN = 8, 2, 16
layer_fwd = torch.ops.aten._transformer_encoder_layer_fwd


def weights(seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g) * 0.3
    return dict(qkv_weight=r(3 * EMBED, EMBED), qkv_bias=r(3 * EMBED), proj_weight=r(EMBED, EMBED),
                proj_bias=r(EMBED), norm_weight_1=1 + r(EMBED), norm_bias_1=r(EMBED), norm_weight_2=1 + r(EMBED),
                norm_bias_2=r(EMBED), ffn_weight_1=r(FFN, EMBED), ffn_bias_1=r(FFN), ffn_weight_2=r(EMBED, FFN),
                ffn_bias_2=r(EMBED))


def call(src, w, use_gelu, norm_first, mask=None, mask_type=None):
    return layer_fwd(src, EMBED, HEADS, w["qkv_weight"], w["qkv_bias"], w["proj_weight"], w["proj_bias"], use_gelu,
                     norm_first, 1e-5, w["norm_weight_1"], w["norm_bias_1"], w["norm_weight_2"], w["norm_bias_2"],
                     w["ffn_weight_1"], w["ffn_bias_1"], w["ffn_weight_2"], w["ffn_bias_2"], mask, mask_type)


def on(device, src, w, mask=None):
    moved = (src.to(device), {k: v.to(device) for k, v in w.items()}, None if mask is None else mask.to(device))
    torch_fl.sim.reset_stats()
    return moved


def key_padding(batch=2, seq=5):
    mask = torch.zeros(batch, seq, dtype=torch.bool)
    mask[0, 3:] = True
    return mask


# (name, mask, mask_type): 0 an [seq, seq] attention mask, 1 a [batch, seq] key-padding mask,
# 2 a merged [batch, heads, seq, seq] mask; float masks as nn.TransformerEncoderLayer makes them.
MASKS = [
    ("none", None, None),
    ("causal", torch.triu(torch.ones(5, 5, dtype=torch.bool), 1), 0),
    ("key padding", key_padding(), 1),
    ("key padding, float", key_padding().float().masked_fill(key_padding(), float("-inf")), 1),
    ("merged", torch.triu(torch.ones(5, 5, dtype=torch.bool), 1).expand(2, HEADS, 5, 5) | key_padding()[:, None, None],
     2),
]


@pytest.mark.parametrize("mask_name,mask,mask_type", MASKS, ids=[m[0] for m in MASKS])
@pytest.mark.parametrize("use_gelu,norm_first", [(False, False), (True, False), (False, True), (True, True)])
def test_matches_cpu(mask_name, mask, mask_type, use_gelu, norm_first):
    src = torch.randn(2, 5, EMBED, generator=torch.Generator().manual_seed(1))
    w = weights()
    expected = call(src, w, use_gelu, norm_first, mask, mask_type)
    d_src, d_w, d_mask = on(DEVICE, src, w, mask)
    out = call(d_src, d_w, use_gelu, norm_first, d_mask, mask_type)
    assert_clean(out, ops=["aclnnLayerNorm"])
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_a_query_with_every_key_hidden_gets_nan_as_on_the_cpu():
    src = torch.randn(2, 3, EMBED)
    row = torch.zeros(3, 3, dtype=torch.bool)
    row[1] = True  # query 1 sees no key
    batch = torch.zeros(2, 3, dtype=torch.bool)
    batch[0] = True  # batch 0 has no key
    w = weights()
    for m, mask_type in ((row, 0), (batch, 1)):
        expected = call(src, w, True, False, m, mask_type)
        assert expected.isnan().any()
        d_src, d_w, d_mask = on(DEVICE, src, w, m)
        out = call(d_src, d_w, True, False, d_mask, mask_type)
        assert_clean(out)
        torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5, equal_nan=True)


def test_module_fast_path_runs_on_flagos():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(EMBED, HEADS, FFN, batch_first=True).eval()
    src = torch.randn(2, 5, EMBED)
    with torch.no_grad():
        expected = layer(src, src_key_padding_mask=key_padding())
        layer.to(DEVICE)
        d_src, pad = src.to(DEVICE), key_padding().to(DEVICE)
        torch_fl.sim.reset_stats()
        out = layer(d_src, src_key_padding_mask=pad)
    assert out.device == torch.device(DEVICE)
    assert torch_fl.sim.stats()["fallback_ops"] == {}
    assert torch_fl.sim.stats()["op_launches"].get("aclnnLayerNorm", 0) == 2  # the fast path ran
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-5)


def test_empty_batch():
    src = torch.randn(0, 5, EMBED)
    w = weights()
    d_src, d_w, _ = on(DEVICE, src, w)
    out = call(d_src, d_w, True, False)
    assert_clean(out)
    assert out.shape == (0, 5, EMBED)


def test_checks_at_the_call():
    w = weights()
    d_src, d_w, d_mask = on(DEVICE, torch.randn(2, 5, EMBED), w, torch.zeros(5, 5, dtype=torch.bool))
    with pytest.raises(RuntimeError, match=r"_transformer_encoder_layer_fwd: expected src of shape \[batch, seq, 8\]"):
        call(d_src[0], d_w, True, False)
    with pytest.raises(RuntimeError, match=r"_transformer_encoder_layer_fwd: a mask needs its mask_type"):
        call(d_src, d_w, True, False, d_mask)
    d_w["ffn_bias_2"] = d_w["ffn_bias_2"].to("flagos:1")
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device"):
        call(d_src, d_w, True, False)
    assert torch_fl.sim.stats()["op_launches"] == {}
    assert torch.flagos.current_device() == 0


def test_negative_control(unguarded):
    d_src, d_w, _ = on(DEVICE, torch.randn(2, 5, EMBED), weights())
    with rejected():
        call(d_src, d_w, True, False)
