"""How often the executor cache spares phase 1 in the loops users run.

Counts, not times: the hits, misses and evictions of the launches of a
steady loop after its warm-up, and which ACLNN operators missed, from
torch_fl.sim.stats(). They do not depend on the machine, so --quick
measures them too.

- AdamW training: a small MLP, torch.optim.AdamW, 20 steps after 3 warm-up
  steps: foreach (torch's default on flagos) and fused (_fused_adamw_, the
  step of transformers' Trainer, optim="adamw_torch_fused"), each with a
  constant lr and with a linear lr schedule (Trainer's default: a new lr
  every step); and the single-tensor AdamW (foreach=False), whose step size
  reaches ACLNN as an aclScalar.
- Llama training: the decode benchmark's model, trained on a fixed batch
  with fused AdamW and a linear lr schedule (Trainer's defaults), 10 steps
  after 3 warm-up steps: the one miss a step of the MLP's fused loop
  measured against a transformer's step.
- Llama decode: transformers' LlamaForCausalLM from a tiny config (the
  models benchmark's), greedy generate of 16 tokens from a 5-token prompt,
  with the default dynamic KV cache and with the static one, each in a
  thread of its own (an empty cache). Counted on the second identical call
  (every sequence length seen before); the first call's counts are kept as
  `first_call`, and those of its decode steps after the first one as
  `first_call_decode_steps` (each new sequence length is a new shape).
- Cyclic shapes: 500 shapes used in turn, two ops each (x + y, then relu_):
  1,000 executors a round against a cache of 512, 40 rounds (40,000
  launches), in a thread of its own (an empty cache); with the admission
  filter and without it (plain LRU).
"""

from __future__ import annotations

import threading

import torch

import torch_fl

DEVICE = "flagos:0"


def _snapshot() -> dict:
    """The executor cache's counters of DEVICE as torch_fl.sim.stats() gives them,
    with the misses by ACLNN operator."""
    stats = torch_fl.sim.stats()
    device = torch.device(DEVICE).index
    return dict(stats["executor_cache"][device], misses_by_operator=stats["executor_cache_misses"])


def _figures(stats: dict) -> dict:
    launches = stats["hits"] + stats["misses"]
    return {"launches": launches, "hits": stats["hits"], "misses": stats["misses"],
            "evictions": stats["evictions"], "hit_rate": stats["hits"] / launches if launches else None,
            "misses_by_operator": dict(sorted(stats["misses_by_operator"].items()))}


def _counts(run) -> dict:
    torch_fl.sim.reset_stats()
    run()
    torch.flagos.synchronize()
    return _figures(_snapshot())


def _difference(after: dict, before: dict) -> dict:
    ops = after["misses_by_operator"]
    return {**{key: after[key] - before[key] for key in ("hits", "misses", "evictions")},
            "misses_by_operator": {op: n - before["misses_by_operator"].get(op, 0) for op, n in ops.items()
                                   if n != before["misses_by_operator"].get(op, 0)}}


def _training(model, loss, steps: int, linear_schedule: bool, options: dict) -> dict:
    """`steps` training steps of `model` after 3 warm-up steps, counted.
    `options` go to torch.optim.AdamW (foreach=..., fused=...). With
    `linear_schedule`, the lr decays linearly to 0 over warm-up and measured
    steps, as Trainer's default scheduler does."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, **options)
    warmup = 3
    schedule = None
    if linear_schedule:
        total = warmup + steps
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: (total - step) / total)

    def step():
        optimizer.zero_grad()
        loss().backward()
        optimizer.step()
        if schedule is not None:
            schedule.step()

    for _ in range(warmup):
        step()

    def loop():
        for _ in range(steps):
            step()

    result = _counts(loop)
    result["steps"] = steps
    result["misses_per_step"] = result["misses"] / steps
    return result


def adamw_training(steps: int, linear_schedule: bool = False, **options) -> dict:
    """A small MLP's training loop (see _training)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8)).to(DEVICE)
    x = torch.randn(16, 32).to(DEVICE)
    y = torch.randn(16, 8).to(DEVICE)
    return _training(model, lambda: torch.nn.functional.mse_loss(model(x), y), steps, linear_schedule, options)


def _tiny_llama_config():
    import transformers

    return transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


def llama_training(steps: int, linear_schedule: bool = False, **options) -> dict:
    """The tiny LlamaForCausalLM's training loop on a fixed (2, 16) batch of
    tokens, its loss from the labels (see _training)."""
    import transformers

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_tiny_llama_config()).to(DEVICE)
    tokens = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(1)).to(DEVICE)
    return _training(model, lambda: model(tokens, labels=tokens).loss, steps, linear_schedule, options)


def llama_decode(cache_implementation: str | None, new_tokens: int = 16) -> dict:
    import transformers

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(_tiny_llama_config()).eval().to(DEVICE)
    prompt = torch.randint(0, 64, (1, 5), generator=torch.Generator().manual_seed(1)).to(DEVICE)
    options = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
    if cache_implementation is not None:
        options["cache_implementation"] = cache_implementation

    class Snapshots(transformers.generation.streamers.BaseStreamer):
        """The counters each time generate hands out tokens: the prompt, then
        each new token after the forward that chose it."""

        def __init__(self):
            self.taken = []

        def put(self, value):
            self.taken.append(_snapshot())

        def end(self):
            pass

    snapshots = Snapshots()

    def generate(streamer=None):
        with torch.no_grad():
            model.generate(prompt, streamer=streamer, **options)

    torch_fl.sim.reset_stats()
    generate(snapshots)  # the prefill's and each new length's shapes are new
    first_end = _snapshot()
    result = _counts(generate)  # the same call again: the steady state
    result["tokens"] = new_tokens
    result["first_call"] = _figures(first_end)
    # From the second new token to the end of the call: the decode steps
    # after the first one (which warms up the one-token shapes), each with a
    # KV length seen for the first time. taken[0] is the prompt.
    result["first_call_decode_steps"] = _figures(_difference(first_end, snapshots.taken[2]))
    return result


def in_new_thread(work):
    """`work()` in a thread of its own: an empty executor cache (the caches are per thread)."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(work()))
    thread.start()
    thread.join()
    return result


def cyclic_shapes(shapes: int, rounds: int, admission: bool) -> dict:
    from torch_fl import _C

    def work():
        pairs = [(torch.ones(n + 1, device=DEVICE), torch.ones(n + 1, device=DEVICE)) for n in range(shapes)]

        def loop():
            for _ in range(rounds):
                for a, b in pairs:
                    (a + b).relu_()
        return _counts(loop)

    previous = _C._executor_cache_admission()
    _C._set_executor_cache_admission(admission)
    try:
        result = in_new_thread(work)
    finally:
        _C._set_executor_cache_admission(previous)
    result.update(shapes=shapes, rounds=rounds, ops_per_shape=2)
    return result


def run_all(quick: bool) -> dict:
    torch.flagos.set_device(0)
    figures = {"adamw_training": adamw_training(20, foreach=True),
               "adamw_training_linear_schedule": adamw_training(20, linear_schedule=True, foreach=True),
               "adamw_training_fused": adamw_training(20, fused=True),
               "adamw_training_fused_linear_schedule": adamw_training(20, linear_schedule=True, fused=True),
               "adamw_training_single_tensor": adamw_training(20, foreach=False)}
    try:
        figures["llama_training_fused_linear_schedule"] = llama_training(10, linear_schedule=True, fused=True)
        figures["llama_decode_dynamic_cache"] = in_new_thread(lambda: llama_decode(None))
        figures["llama_decode_static_cache"] = in_new_thread(lambda: llama_decode("static"))
    except ImportError as missing:
        figures["llama_decode_dynamic_cache"] = {"skipped": f"needs the test requirements: {missing}"}
    rounds = 4 if quick else 40
    figures["cyclic_shapes"] = cyclic_shapes(500, rounds, admission=True)
    figures["cyclic_shapes_lru"] = cyclic_shapes(500, rounds, admission=False)
    return figures


def _row(name: str, f: dict) -> str:
    rate = "-" if f["hit_rate"] is None else f"{100 * f['hit_rate']:.2f} %"
    missed = sorted(f.get("misses_by_operator", {}).items(), key=lambda item: -item[1])
    shown = ", ".join(f"{op} {n}" for op, n in missed[:3]) + (", ..." if len(missed) > 3 else "")
    return f"| {name} | {f['launches']} | {f['hits']} | {f['misses']} | {f['evictions']} | {rate} | {shown} |"


def table(figures: dict) -> str:
    """Markdown rows: loop, launches, hits, misses, evictions, hit rate, the operators that missed most."""
    lines = ["| loop (steady state) | launches | hits | misses | evictions | hit rate | misses by operator |",
             "|---|---|---|---|---|---|---|"]
    for name, f in figures.items():
        if "skipped" in f:
            lines.append(f"| {name} | skipped: {f['skipped']} | | | | | |")
            continue
        lines.append(_row(name, f))
        if "first_call_decode_steps" in f:
            lines.append(_row(f"{name}, first call's decode steps", f["first_call_decode_steps"]))
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(run_all(quick=False)))
