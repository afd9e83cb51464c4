"""scaled_dot_product_attention on flagos: one fused launch per call
(csrc/handwritten/attention.cc on aclnnFlashAttentionScoreV2 and its
gradient), chosen by _fused_sdp_choice (csrc/aten/sdpa_choice.cc). Values
and gradients against the CPU, with masks (additive and boolean), is_causal,
GQA and a given scale, on flagos:2 while flagos:0 is current."""

import pytest
import torch
import torch.nn.functional as F
import torch_fl
from hw_util import DEVICE, assert_clean, needs_devices, on_device, rejected
from torch.nn.attention import SDPBackend, sdpa_kernel

pytestmark = needs_devices

FORWARD = "aclnnFlashAttentionScoreV2"
BACKWARD = "aclnnFlashAttentionScoreGradV2"
# What a math decomposition would launch: none of it may run on the fused path.
MATH_OPS = {"aclnnMm", "aclnnBatchMatMul", "aclnnMatmul", "aclnnSoftmax", "aclnnSoftmaxBackward"}


def rand(*sizes, seed=0, dtype=torch.float32):
    return torch.randn(*sizes, generator=torch.Generator().manual_seed(seed)).to(dtype)


def qkv(b=2, h=4, sq=5, skv=7, d=8, kv_heads=None, dv=None, dtype=torch.float32):
    kv_heads = kv_heads or h
    return (rand(b, h, sq, d, seed=1, dtype=dtype), rand(b, kv_heads, skv, d, seed=2, dtype=dtype),
            rand(b, kv_heads, skv, dv or d, seed=3, dtype=dtype))


def launches():
    return torch_fl.sim.stats()["op_launches"]


def assert_fused(direction=FORWARD):
    ops = launches()
    assert ops.get(direction) == 1, ops
    assert not MATH_OPS & set(ops), ops


def close(got, want, dtype=torch.float32):
    tol = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    torch.testing.assert_close(got.cpu().float(), want.float(), rtol=tol, atol=tol)


CONFIGS = {
    "plain": (qkv(), {}),
    "scale": (qkv(), {"scale": 0.3}),
    "additive mask": (qkv(), {"attn_mask": rand(5, 7, seed=4)}),
    "additive mask per batch": (qkv(), {"attn_mask": rand(2, 1, 5, 7, seed=4)}),
    "bool mask": (qkv(), {"attn_mask": rand(2, 1, 1, 7, seed=5) > -0.5}),
    "causal": (qkv(sq=6, skv=6), {"is_causal": True}),
    "causal, fewer queries": (qkv(sq=3, skv=6), {"is_causal": True}),
    "gqa": (qkv(h=4, kv_heads=2), {"enable_gqa": True}),
    "gqa causal": (qkv(h=4, kv_heads=1, sq=6, skv=6), {"enable_gqa": True, "is_causal": True}),
    "smaller value head dim": (qkv(dv=4), {}),
    "one query": (qkv(sq=1), {}),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_forward(name):
    (q, k, v), kwargs = CONFIGS[name]
    want = F.scaled_dot_product_attention(q, k, v, **kwargs)
    dq, dk, dv = on_device(q, k, v)
    dkw = {key: val.to(DEVICE) if isinstance(val, torch.Tensor) else val for key, val in kwargs.items()}
    torch_fl.sim.reset_stats()
    got = F.scaled_dot_product_attention(dq, dk, dv, **dkw)
    assert_clean(got, ops=[FORWARD])
    assert_fused()
    close(got, want)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_backward(name):
    (q, k, v), kwargs = CONFIGS[name]
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    F.scaled_dot_product_attention(*leaves, **kwargs).pow(2).sum().backward()
    dleaves = [t.to(DEVICE).requires_grad_() for t in (q, k, v)]
    dkw = {key: val.to(DEVICE) if isinstance(val, torch.Tensor) else val for key, val in kwargs.items()}
    out = F.scaled_dot_product_attention(*dleaves, **dkw)
    loss = out.pow(2).sum()
    torch_fl.sim.reset_stats()
    loss.backward()
    assert_fused(BACKWARD)
    assert_clean(*(t.grad for t in dleaves))
    for got, want in zip(dleaves, leaves):
        assert got.grad.shape == want.grad.shape
        close(got.grad, want.grad)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_precision(dtype):
    q, k, v = qkv(dtype=dtype)
    mask = rand(5, 7, seed=4).to(dtype)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask.float())
    got = F.scaled_dot_product_attention(*on_device(q, k, v), attn_mask=mask.to(DEVICE))
    assert got.dtype == dtype
    assert_fused()
    close(got, want, dtype)


def test_non_contiguous_inputs():
    """(batch, sequence, heads, dim) projections transposed to heads-first, as models do."""
    q, k, v = (rand(2, 5, 4, 8, seed=s).transpose(1, 2) for s in (1, 2, 3))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    dq, dk, dv = (t.to(DEVICE) for t in (rand(2, 5, 4, 8, seed=s) for s in (1, 2, 3)))
    torch_fl.sim.reset_stats()
    got = F.scaled_dot_product_attention(dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2), is_causal=True)
    assert_fused()
    close(got, want)


def test_one_launch_per_call():
    dq, dk, dv = on_device(*qkv())
    mask = rand(5, 7).to(DEVICE)
    F.scaled_dot_product_attention(dq, dk, dv, is_causal=True)  # makes the device's causal mask once
    lse = {"aclnnLog": 1, "aclnnInplaceAdd": 1}  # logsumexp = max + log(sum)
    for kwargs, others in (({}, lse), ({"attn_mask": mask}, dict(lse, aclnnIsNegInf=1)), ({"is_causal": True}, lse)):
        torch_fl.sim.reset_stats()
        F.scaled_dot_product_attention(dq, dk, dv, **kwargs)
        assert launches() == dict(others, **{FORWARD: 1}), (kwargs, launches())


def test_fully_masked_rows_give_zeros():
    """A query row that may attend nothing: PyTorch's softmax gives zeros (not
    NaN); CANN does with innerPrecise 2, its -inf positions as attenMask."""
    q, k, v = qkv()
    mask = rand(2, 1, 5, 7, seed=7) > 0
    mask[:, :, 2] = False  # row 2 attends nothing
    mask[:, :, :, 0] |= torch.arange(5) != 2  # every other row attends something
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    want = F.scaled_dot_product_attention(*leaves, attn_mask=mask)
    want.pow(2).sum().backward()
    dleaves = [t.to(DEVICE).requires_grad_() for t in (q, k, v)]
    got = F.scaled_dot_product_attention(*dleaves, attn_mask=mask.to(DEVICE))
    got.pow(2).sum().backward()
    assert not got.isnan().any()
    close(got.detach(), want.detach())
    for g, w in zip(dleaves, leaves):
        close(g.grad, w.grad)


def test_logsumexp_output():
    q, k, v = qkv()
    mask = rand(5, 7, seed=4)
    want_out, want_lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
    got = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(*on_device(q, k, v), mask.to(DEVICE))
    assert len(got) == 9 and got[4] == 5 and got[5] == 7
    close(got[0], want_out)
    close(got[1], want_lse)
    assert got[1].shape == (2, 4, 5) and got[1].dtype == torch.float32


@pytest.mark.parametrize("transposed", [False, True], ids=["bnsd", "bsnd"])
def test_outputs_match_the_meta_function(transposed):
    """What the op returns has the types, sizes and strides its meta function
    promises: torch.compile checks every output against the meta result (a
    None philox seed raised TypeError: expected Tensor(); an output
    contiguous where the meta function follows query's memory order failed
    its stride check). transformers passes q, k, v transposed from [B, S, N, D]."""
    q, k, v = qkv(sq=7, dv=4)
    if transposed:
        q, k, v = (t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v))
    got = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(*on_device(q, k, v))
    meta = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(
        *(t.to("meta").as_strided(t.shape, t.stride()) for t in (q, k, v)))
    for i, (g, m) in enumerate(zip(got, meta)):
        assert type(g) is type(m), (i, g, m)
        if isinstance(m, torch.Tensor):
            assert (g.shape, g.stride(), g.dtype) == (m.shape, m.stride(), m.dtype), i
    seed, offset = got[6], got[7]
    assert seed.item() == 0 and offset.item() == 0  # no dropout: unused
    close(got[0], F.scaled_dot_product_attention(q, k, v))


def test_direct_bool_mask():
    """A bool mask given to the op itself (scaled_dot_product_attention converts
    one to additive first) goes to CANN's attenMask, inverted."""
    q, k, v = qkv()
    mask = rand(2, 4, 5, 7, seed=6) > 0
    mask[..., 0] = True  # no fully masked row
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    got = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(*on_device(q, k, v), mask.to(DEVICE))[0]
    assert {"aclnnLogicalNot", FORWARD} <= set(launches())
    close(got, want)


def test_choice():
    choice = torch._fused_sdp_choice
    dq, dk, dv = on_device(*qkv())
    overrideable, math = SDPBackend.OVERRIDEABLE.value, SDPBackend.MATH.value
    assert choice(dq, dk, dv) == overrideable
    assert choice(dq, dk, dv, is_causal=True) == overrideable
    assert choice(dq, dk, dv, dropout_p=0.1) == math
    assert choice(dq.double(), dk.double(), dv.double()) == math
    assert choice(dq[0], dk[0], dv[0]) == math  # 3-D
    gq, gk, gv = on_device(*qkv(kv_heads=2))
    assert choice(gq, gk, gv) == math and choice(gq, gk, gv, enable_gqa=True) == overrideable
    mask = torch.zeros(5, 7, device=DEVICE, requires_grad=True)
    assert choice(dq, dk, dv, attn_mask=mask) == math  # its gradient needs the math path
    with sdpa_kernel([SDPBackend.MATH]):
        assert choice(dq, dk, dv) == math


def test_math_paths_still_work():
    q, k, v = qkv()
    dq, dk, dv = on_device(q, k, v)
    with sdpa_kernel([SDPBackend.MATH]):
        got = F.scaled_dot_product_attention(dq, dk, dv)
    assert FORWARD not in launches()
    close(got, F.scaled_dot_product_attention(q, k, v))
    mask = rand(5, 7, seed=4)
    dmask = mask.to(DEVICE).requires_grad_()
    F.scaled_dot_product_attention(dq, dk, dv, attn_mask=dmask).sum().backward()
    cmask = mask.clone().requires_grad_()
    F.scaled_dot_product_attention(q, k, v, attn_mask=cmask).sum().backward()
    close(dmask.grad, cmask.grad)
    out = F.scaled_dot_product_attention(dq, dk, dv, dropout_p=0.5)  # dropout: math
    assert out.shape == (2, 4, 5, 8) and out.device == torch.device(DEVICE)


def test_errors():
    dq, dk, dv = on_device(*qkv())
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(dq, dk, dv.to("flagos:1"))
    with pytest.raises(RuntimeError, match="dropout is not supported"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(dq, dk, dv, None, 0.5)
    with pytest.raises(RuntimeError, match="return_debug_mask is not supported"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(dq, dk, dv, None, 0.0, False, True)


def test_negative_control_attention(unguarded):
    dq, dk, dv = on_device(*qkv())
    with rejected():
        F.scaled_dot_product_attention(dq, dk, dv)
