"""How often the executor cache spares phase 1 in the loops users run.

Counts, not times: the hits, misses and evictions of the launches of a
steady loop after its warm-up, from torch.flagos.executor_cache_stats. They
do not depend on the machine, so --quick measures them too.

- AdamW training: a small MLP, torch.optim.AdamW (foreach, torch's default
  on flagos), after 3 warm-up steps; and the single-tensor AdamW
  (foreach=False), whose step size reaches ACLNN as an aclScalar.
- Llama decode: transformers' LlamaForCausalLM from a tiny config (the
  models benchmark's), greedy generate of 16 tokens from a 5-token prompt,
  measured on the second identical call (the first call's counts are kept
  as `first_call`), with the default dynamic KV cache and with the static
  one.
- Cyclic shapes: 500 shapes used in turn, two ops each (x + y, then relu_):
  1,000 executors a round against a cache of 512, 40 rounds (40,000
  launches), in a thread of its own (an empty cache); with the admission
  filter and without it (plain LRU).
"""

from __future__ import annotations

import threading

import torch

DEVICE = "flagos:0"


def _counts(run) -> dict:
    torch.flagos.reset_executor_cache_stats()
    run()
    torch.flagos.synchronize()
    stats = torch.flagos.executor_cache_stats(DEVICE)
    launches = stats["hits"] + stats["misses"]
    return {"launches": launches, "hits": stats["hits"], "misses": stats["misses"],
            "evictions": stats["evictions"], "hit_rate": stats["hits"] / launches if launches else None}


def adamw_training(steps: int, foreach: bool) -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8)).to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=foreach)
    x = torch.randn(16, 32).to(DEVICE)
    y = torch.randn(16, 8).to(DEVICE)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

    for _ in range(3):
        step()

    def loop():
        for _ in range(steps):
            step()

    result = _counts(loop)
    result["steps"] = steps
    result["misses_per_step"] = result["misses"] / steps
    return result


def llama_decode(cache_implementation: str | None, new_tokens: int = 16) -> dict:
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(config).eval().to(DEVICE)
    prompt = torch.randint(0, 64, (1, 5), generator=torch.Generator().manual_seed(1)).to(DEVICE)
    options = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
    if cache_implementation is not None:
        options["cache_implementation"] = cache_implementation

    def generate():
        with torch.no_grad():
            model.generate(prompt, **options)

    first = _counts(generate)  # the prefill's and each new length's shapes are new
    result = _counts(generate)  # the same call again: the steady state
    result["tokens"] = new_tokens
    result["first_call"] = first
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

    result = {}
    previous = _C._executor_cache_admission()
    _C._set_executor_cache_admission(admission)
    try:
        thread = threading.Thread(target=lambda: result.update(work()))
        thread.start()
        thread.join()
    finally:
        _C._set_executor_cache_admission(previous)
    result.update(shapes=shapes, rounds=rounds, ops_per_shape=2)
    return result


def run_all(quick: bool) -> dict:
    torch.flagos.set_device(0)
    figures = {"adamw_training": adamw_training(20, foreach=True),
               "adamw_training_single_tensor": adamw_training(20, foreach=False)}
    try:
        figures["llama_decode_dynamic_cache"] = llama_decode(None)
        figures["llama_decode_static_cache"] = llama_decode("static")
    except ImportError as missing:
        figures["llama_decode_dynamic_cache"] = {"skipped": f"needs the test requirements: {missing}"}
    rounds = 4 if quick else 40
    figures["cyclic_shapes"] = cyclic_shapes(500, rounds, admission=True)
    figures["cyclic_shapes_lru"] = cyclic_shapes(500, rounds, admission=False)
    return figures


def table(figures: dict) -> str:
    """Markdown rows: loop, launches, hits, misses, evictions, hit rate."""
    lines = ["| loop (steady state) | launches | hits | misses | evictions | hit rate |", "|---|---|---|---|---|---|"]
    for name, f in figures.items():
        if "skipped" in f:
            lines.append(f"| {name} | skipped: {f['skipped']} | | | | |")
            continue
        rate = "-" if f["hit_rate"] is None else f"{100 * f['hit_rate']:.2f} %"
        lines.append(f"| {name} | {f['launches']} | {f['hits']} | {f['misses']} | {f['evictions']} | {rate} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import torch_fl  # noqa: F401

    print(table(run_all(quick=False)))
