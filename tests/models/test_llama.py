"""transformers' Llama generating with its KV cache, greedy, on flagos: the
same tokens as on the CPU."""

from __future__ import annotations

import copy

import pytest
import torch

import torch_fl

from .common import dispatch, devices_of

transformers = pytest.importorskip("transformers")


def small_llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).eval()


def generate(model, ids):
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=6, do_sample=False, use_cache=True)


@pytest.fixture(scope="module")
def reference():
    model = small_llama()
    ids = torch.randint(0, 64, (2, 5), generator=torch.Generator().manual_seed(1))
    return model, ids, generate(model, ids)


def test_generates_on_one_device(reference):
    model, ids, expected = reference
    flagos_model = copy.deepcopy(model).to("flagos:1")
    tokens = generate(flagos_model, ids.to("flagos:1"))
    assert tokens.device == torch.device("flagos:1")
    assert torch.equal(tokens.cpu(), expected)


def test_generates_split_over_two_devices(reference):
    model, ids, expected = reference
    split = dispatch(copy.deepcopy(model), {
        "model.embed_tokens": "flagos:1", "model.rotary_emb": "flagos:1", "model.layers.0": "flagos:1",
        "model.layers.1": "flagos:2", "model.norm": "flagos:2", "lm_head": "flagos:2"})
    assert devices_of(split) == {"flagos:1", "flagos:2"}
    torch_fl.sim.reset_stats()
    tokens = generate(split, ids.to("flagos:1"))
    assert torch.equal(tokens.cpu(), expected)
    launches = torch_fl.sim.stats()["launches"]
    assert launches[1] > 0 and launches[2] > 0 and launches[0] == 0


def test_samples_on_the_device(reference):
    """generate(do_sample=True) draws with torch.multinomial on flagos:1: the
    same seed gives the same tokens, nothing runs on the CPU fallback."""
    model, ids, _ = reference
    flagos_model = copy.deepcopy(model).to("flagos:1")
    draws = []
    torch_fl.sim.reset_stats()
    for _ in range(2):
        torch.manual_seed(7)
        with torch.no_grad():
            draws.append(flagos_model.generate(ids.to("flagos:1"), max_new_tokens=6, do_sample=True, top_k=0,
                                               temperature=1.5).cpu())
    assert torch.equal(draws[0], draws[1])
    assert draws[0].shape == (2, 11) and int(draws[0].max()) < 64
    assert torch_fl.sim.stats()["op_launches"].get("aclnnMultinomial", 0) > 0


def test_generates_with_a_static_cache(reference):
    """cache_implementation="static" preallocates the KV cache and writes each
    step's keys and values with index_copy_ (it went to the CPU fallback, so
    strict mode failed): the same tokens as on the CPU, in strict mode."""
    model, ids, _ = reference
    with torch.no_grad():
        expected = model.generate(ids, max_new_tokens=6, do_sample=False, cache_implementation="static")
    flagos_model = copy.deepcopy(model).to("flagos:1")
    torch_fl.sim.reset_stats()
    with torch.no_grad():
        tokens = flagos_model.generate(ids.to("flagos:1"), max_new_tokens=6, do_sample=False,
                                       cache_implementation="static")
    assert torch.equal(tokens.cpu(), expected)
    assert torch_fl.sim.stats()["op_launches"].get("aclnnInplaceIndexCopy", 0) > 0


def test_beam_search(reference):
    """num_beams > 1: beam scores, reordering of the cache, torch.equal on the
    device; the same tokens as on the CPU, in strict mode."""
    model, ids, _ = reference
    with torch.no_grad():
        expected = model.generate(ids, max_new_tokens=4, do_sample=False, num_beams=3)
    flagos_model = copy.deepcopy(model).to("flagos:1")
    with torch.no_grad():
        tokens = flagos_model.generate(ids.to("flagos:1"), max_new_tokens=4, do_sample=False, num_beams=3)
    assert torch.equal(tokens.cpu(), expected)
