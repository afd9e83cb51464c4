"""Model steps on flagos against the CPU, with the runtime calls each step makes.

Two steps users run thousands of times:
- a Qwen-Image denoising step with the transformer of
  examples/qwen_image_showcase.py split as its `split` case splits it, over
  flagos:1 and flagos:2, and the scheduler step with the latents on
  flagos:3, flagos:0 current;
- an LLM decode step: transformers' Llama (the tests' small config) producing
  one token from its KV cache, on flagos:1 while flagos:0 is current, and
  split over flagos:1 and flagos:2.

Each step's time is the median over interleaved rounds (CPU, flagos, CPU,
...); the counts (launches per device, aclrtSetDevice calls) are those of
one step. The simulator computes with the CPU's kernels, so the ratio is the
backend's host cost on top of the same arithmetic, not a device speed.
Needs diffusers, transformers and accelerate (the test requirements); a
missing package skips its step with the reason in the results.
"""

from __future__ import annotations

import copy
import os
import sys
import warnings

import torch

from benchmarks.generator import REPO
from benchmarks.timing import Variant, compare, interleave, summarize

TEXT_TOKENS = 5


def _counts(run) -> dict:
    """Launches per device and set-device calls of one call of `run`."""
    import torch_fl

    torch_fl.sim.reset_stats()
    run()
    torch.flagos.synchronize()
    stats = torch_fl.sim.stats()
    return {"launches": {f"flagos:{d}": n for d, n in stats["launches"].items() if n},
            "set_device_calls": stats["set_device_calls"]}


def _loop(step, device_work: bool):
    def run(n: int) -> None:
        for _ in range(n):
            step()
        if device_work:
            torch.flagos.synchronize()  # the step is done when its device work is
    return run


def _measure(cpu_step, flagos_step, reps: int) -> dict:
    cpu, flagos = interleave([Variant("cpu", _loop(cpu_step, False)), Variant("flagos", _loop(flagos_step, True))],
                             1, reps)
    return {"cpu_ms": _ms(summarize(cpu.samples)), "flagos_ms": _ms(summarize(flagos.samples)),
            "ratio": compare(flagos.samples, cpu.samples)["ratio"], "per_step": _counts(flagos_step)}


def _ms(summary: dict) -> dict:
    return {k: (v / 1e6 if k != "n" else v) for k, v in summary.items()}


def qwen_image_step(reps: int) -> dict:
    sys.path.insert(0, os.path.join(REPO, "examples"))
    import qwen_image_showcase as showcase
    from accelerate import dispatch_model
    from diffusers import FlowMatchEulerDiscreteScheduler

    torch.manual_seed(0)
    transformer = showcase.make_transformer()
    # main_device: the inputs start where the first shard is (the text mask meets the text states there).
    split = dispatch_model(copy.deepcopy(transformer), main_device="flagos:1", device_map=showcase.TRANSFORMER_SPLIT)
    scheduler = FlowMatchEulerDiscreteScheduler()
    g = torch.Generator().manual_seed(1)
    text = torch.randn(1, TEXT_TOKENS, 16, generator=g)
    # 8x8 latent pixels in 2x2 patches of 4 channels: 16 image tokens of 16 features
    latents = torch.randn(1, 4, 4, 2, 4, 2, generator=g).permute(0, 2, 4, 1, 3, 5).reshape(1, 16, 16)
    mask = torch.ones(1, TEXT_TOKENS)
    shapes = [(1, 4, 4)]

    def step_on(model, sched, device):
        lat, txt, msk = latents.to(device), text.to(device), mask.to(device)
        sched.set_timesteps(3, device=device)
        t = sched.timesteps[0]

        def step():
            sched._step_index = None  # every call is the loop's first step, from the same latents
            timestep = (t / 1000).expand(1).to(lat.dtype)
            noise = model(hidden_states=lat, encoder_hidden_states=txt, encoder_hidden_states_mask=msk,
                          timestep=timestep, img_shapes=shapes, return_dict=False)[0]
            return sched.step(noise.to(lat.device), t, lat, return_dict=False)[0]
        return step

    with torch.no_grad():
        result = _measure(step_on(transformer, copy.deepcopy(scheduler), "cpu"),
                          step_on(split, copy.deepcopy(scheduler), "flagos:3"), reps)
    result["placement"] = "transformer on flagos:1+2, scheduler and latents on flagos:3, flagos:0 current"
    return result


def llm_decode_step(reps: int) -> dict:
    import transformers
    from accelerate import dispatch_model

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 64, (2, 5), generator=torch.Generator().manual_seed(1))

    def decode_on(m, device):
        """One token from a 5-token prompt's cache; the cache is copied so every step is the same step."""
        prompt = ids.to(device)
        with torch.no_grad():
            prefill = m(prompt, use_cache=True)
        cache = prefill.cache
        token = prefill.logits[:, -1:].argmax(-1)

        def step():
            return m(token, cache=copy.deepcopy(cache), use_cache=True).logits
        return step

    split = dispatch_model(copy.deepcopy(model), main_device="flagos:1", device_map={
        "model.embed_tokens": "flagos:1", "model.rotary_emb": "flagos:1", "model.layers.0": "flagos:1",
        "model.layers.1": "flagos:2", "model.norm": "flagos:2", "lm_head": "flagos:2"})
    with torch.no_grad():
        one = _measure(decode_on(model, "cpu"), decode_on(copy.deepcopy(model).to("flagos:1"), "flagos:1"), reps)
        two = _measure(decode_on(model, "cpu"), decode_on(split, "flagos:1"), reps)
    return {"one_device": {**one, "placement": "flagos:1, flagos:0 current"},
            "split": {**two, "placement": "flagos:1+2, flagos:0 current"}}


def run_all(reps: int) -> dict:
    """The model steps, or the reason each was skipped."""
    torch.flagos.set_device(0)
    warnings.filterwarnings("ignore", category=FutureWarning)
    figures = {}
    for name, bench in (("qwen_image_denoise_step", qwen_image_step), ("llm_decode_step", llm_decode_step)):
        try:
            figures[name] = bench(reps)
        except ImportError as missing:
            figures[name] = {"skipped": f"needs the test requirements: {missing}"}
    return figures


def table(figures: dict) -> str:
    """Markdown rows: step, CPU, flagos, ratio, launches and set-device calls per step."""
    lines = ["| model step | CPU | flagos | flagos / CPU | per step on flagos |", "|---|---|---|---|---|"]
    steps = []
    for name, figure in figures.items():
        if "skipped" in figure:
            lines.append(f"| {name} | skipped: {figure['skipped']} | | | |")
        elif "one_device" in figure:
            steps += [(f"{name} ({k.replace('_', ' ')})", v) for k, v in figure.items()]
        else:
            steps.append((name, figure))
    for name, f in steps:
        per = f["per_step"]
        launches = ", ".join(f"{d}: {n}" for d, n in per["launches"].items())
        lines.append(f"| {name}: {f['placement']} | {f['cpu_ms']['median']:.1f} ms | {f['flagos_ms']['median']:.1f} ms "
                     f"| {f['ratio']['median']:.2f}x | launches {launches}; {per['set_device_calls']} set-device calls |")
    return "\n".join(lines)
