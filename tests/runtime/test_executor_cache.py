"""The executor cache (csrc/runtime/executor_cache.cc): per-device counters
(torch.flagos and torch_fl.sim.stats, with the misses by operator),
scan-resistant eviction, and steady loops that stop missing after warm-up:
AdamW training (foreach and fused) and Llama decode. Each cache is per thread, so the eviction tests run their workload
in a new thread: an empty cache, whatever earlier tests left in this one."""

import subprocess
import sys
import threading

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")
C = torch_fl._C

CAPACITY = 512  # ExecutorCache::kCapacity


@pytest.fixture
def admission():
    """Restores the admission filter after a negative control switched it off."""
    yield C._set_executor_cache_admission
    C._set_executor_cache_admission(True)


def in_new_thread(work):
    """Runs `work` in a thread of its own (an empty executor cache) and returns its result."""
    result = {}

    def run():
        try:
            result["value"] = work()
        except BaseException as error:  # re-raised in the test's thread
            result["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


# Counters are per process: in a process of its own, no thread left running by
# an earlier test (a loader, a hook) can count on another device meanwhile.
PER_DEVICE_COUNTS = """
import torch, torch_fl
C = torch_fl._C
x = torch.empty(37, device="flagos:1")
y = torch.empty(38, device="flagos:1")
x.fill_(0.25)
torch.flagos.reset_executor_cache_stats()
x.fill_(0.25)
x.fill_(0.25)
y.fill_(0.125)
stats = torch.flagos.executor_cache_stats("flagos:1")
assert (stats["hits"], stats["misses"]) == (2, 1), stats
# Negative control: the other devices counted nothing.
for device in (0, 2, 3):
    other = torch.flagos.executor_cache_stats(device)
    assert (other["hits"], other["misses"], other["evictions"]) == (0, 0, 0), (device, other)
# The total of the devices is what the backend reported before per-device counters.
assert C._executor_cache_stats()["hits"] == 2
assert C._executor_cache_stats()["misses"] == 1
print("ok")
"""


def test_a_repeated_op_hits_and_a_new_shape_misses_on_its_own_device():
    run = subprocess.run([sys.executable, "-c", PER_DEVICE_COUNTS], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_cached_counts_the_executors_held():
    x = torch.empty(41, device="flagos:2")
    before = torch.flagos.executor_cache_stats(2)["cached"]
    x.fill_(0.375)
    assert torch.flagos.executor_cache_stats(2)["cached"] == before + 1
    x.fill_(0.375)  # a hit keeps no second copy
    assert torch.flagos.executor_cache_stats(2)["cached"] == before + 1


def test_current_device_is_the_default_and_a_bad_index_raises():
    torch.flagos.set_device(3)
    assert torch.flagos.executor_cache_stats() == torch.flagos.executor_cache_stats(3)
    with pytest.raises((IndexError, RuntimeError), match="device"):
        torch.flagos.executor_cache_stats(99)


def test_evictions_are_counted_and_the_cache_stays_bounded():
    def work():
        x = torch.empty(4, device="flagos:1")
        torch.flagos.reset_executor_cache_stats()
        for k in range(CAPACITY + 100):
            x.fill_(10_000.5 + k)  # a new scalar value: a new key each time
        return torch.flagos.executor_cache_stats(1)

    before = torch.flagos.executor_cache_stats(1)["cached"]
    stats = in_new_thread(work)
    assert stats["misses"] == CAPACITY + 100
    assert stats["evictions"] == 100
    assert stats["cached"] - before == CAPACITY


def hot_set_after_scans(hot_keys=50, scan_keys=CAPACITY + 100, rounds=3):
    """Hits of the last round's hot keys, each round being the hot keys once, then
    `scan_keys` keys never seen before (a scan longer than the cache)."""
    def work():
        x = torch.empty(4, device="flagos:2")
        fresh = iter(range(1 << 30))
        hits = 0
        for _ in range(rounds):
            torch.flagos.reset_executor_cache_stats()
            for k in range(hot_keys):
                x.fill_(20_000.5 + k)
            hits = torch.flagos.executor_cache_stats(2)["hits"]
            for _ in range(scan_keys):
                x.fill_(1e9 + next(fresh))
        return hits

    return in_new_thread(work)


def test_a_scan_longer_than_the_cache_keeps_the_hot_set_hitting(admission):
    assert hot_set_after_scans() == 50
    # Negative control: without the admission filter (plain LRU) the scan
    # flushes the hot set every round.
    admission(False)
    assert hot_set_after_scans() == 0


def cycle_hits(keys=CAPACITY + 200, rounds=4):
    """Hits of the last round of `keys` keys used in turn, round after round."""
    def work():
        x = torch.empty(4, device="flagos:3")
        for _ in range(rounds):
            torch.flagos.reset_executor_cache_stats()
            for k in range(keys):
                x.fill_(30_000.5 + k)
        return torch.flagos.executor_cache_stats(3)["hits"]

    return in_new_thread(work)


def test_a_cycle_larger_than_the_cache_keeps_most_of_it_hitting(admission):
    # The main segment keeps its keys; only the window churns.
    assert cycle_hits() >= CAPACITY - 2 * 16
    # Negative control: LRU evicts each key just before its next use.
    admission(False)
    assert cycle_hits() == 0


def adamw_misses_each_step(steps=4, warmup=3, new_lr_every_step=False, dtype=torch.float32, before=None, **options):
    """The misses of each step of a fixed-shape training loop of `dtype`
    after its warm-up, and its hits per step, in a thread of its own (an
    empty cache, unless `before()` fills it first); `options` go to
    torch.optim.AdamW (foreach=..., fused=...)."""

    def work():
        if before is not None:
            before()
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        model = model.to("flagos:1", dtype)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, **options)
        schedule = (torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 / (step + 1))
                    if new_lr_every_step else None)
        x = torch.randn(32, 8).to("flagos:1", dtype)
        y = torch.randn(32, 4).to("flagos:1", dtype)

        def step():
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
            if schedule is not None:
                schedule.step()

        for _ in range(warmup):
            step()
        torch.flagos.reset_executor_cache_stats()
        misses = []
        for _ in range(steps):
            missed = torch.flagos.executor_cache_stats(1)["misses"]
            step()
            misses.append(torch.flagos.executor_cache_stats(1)["misses"] - missed)
        return misses, torch.flagos.executor_cache_stats(1)["hits"] / steps

    return in_new_thread(work)


def adamw_misses_per_step(steps=4, **options):
    """Misses and hits per step after warm-up (see adamw_misses_each_step)."""
    misses, hits = adamw_misses_each_step(steps, **options)
    return sum(misses) / steps, hits


def test_adamw_steady_state_misses_nothing():
    misses, hits = adamw_misses_per_step(foreach=True)
    assert misses == 0
    assert hits > 20
    # Negative control: the single-tensor AdamW passes its step-dependent
    # step size as an aclScalar, a new cache key every step.
    misses, _ = adamw_misses_per_step(foreach=False)
    assert misses >= 4  # one per parameter at least


def test_a_new_loop_displaces_a_hot_earlier_working_set():
    """A cache full of executors used 16 times each (more than the loop's):
    the loop's new executors must win the admission contest by their growing
    counts (the sketch counts to 15), so its misses stop within 16 steps,
    rather than never (a frequency contest that the old set always wins) or
    at once (which would make a cycle of shapes flush the cache)."""

    def hot_set():
        xs = [torch.ones(n + 1, device="flagos:1") for n in range(600)]
        for _ in range(16):
            for x in xs:
                x.add_(1)

    misses, _ = adamw_misses_each_step(steps=20, warmup=0, before=hot_set, foreach=True)
    assert misses[1] > 0  # after the first step's, the old set still wins some contests
    assert misses[16:] == [0, 0, 0, 0]
    # Negative control: on an empty cache the second step hits everything.
    misses, _ = adamw_misses_each_step(steps=3, warmup=0, foreach=True)
    assert misses[0] > 0 and misses[1:] == [0, 0]


def test_foreach_adamw_with_a_new_lr_every_step_misses_nothing():
    """A scheduler's new lr every step: the step sizes and the decoupled weight
    decay, params *= 1 - lr * weight_decay (aclnnForeachMulScalar, its factor
    a device tensor), reach their operators as device data and still hit."""
    torch_fl.sim.reset_stats()
    misses, hits = adamw_misses_per_step(foreach=True, new_lr_every_step=True)
    assert (misses, hits > 20) == (0, True)
    assert torch_fl.sim.stats()["op_launches"]["aclnnForeachMulScalar"] > 0
    # Negative control: a float16 model keeps the factor an aclScalar
    # (aclnnForeachMulScalarV2), a new key every step (and its lr-dependent
    # step sizes take per-tensor ops, which miss too).
    torch_fl.sim.reset_stats()
    misses, _ = adamw_misses_per_step(foreach=True, new_lr_every_step=True, dtype=torch.float16)
    assert misses >= 1
    # At least the decay's once a step (more when earlier tests filled this thread's cache).
    assert torch_fl.sim.stats()["executor_cache_misses"]["aclnnForeachMulScalarV2"] >= 4


def test_fused_adamw_steady_state_misses_nothing():
    """_fused_adamw_ (transformers' Trainer's step): the step counts reach
    aclnnFusedAdamw as device tensors, so a constant lr hits every step."""
    torch_fl.sim.reset_stats()
    misses, hits = adamw_misses_per_step(fused=True)
    assert misses == 0
    assert hits > 10
    launches = torch_fl.sim.stats()["op_launches"]
    assert launches["aclnnFusedAdamw"] == 3 + 4  # one list launch a step, warm-up and steps: the fused step ran


def test_fused_adamw_misses_once_a_step_when_lr_changes():
    """aclnnFusedAdamw takes lr as a double, read at phase 1 (so do all of
    CANN's AdamW operators for A2/A3): a scheduler that sets a new lr every
    step (Trainer's default linear one) makes the step's one launch a new
    key, and nothing else."""
    torch_fl.sim.reset_stats()
    misses, _ = adamw_misses_per_step(fused=True, new_lr_every_step=True)
    assert misses == 1
    assert torch_fl.sim.stats()["executor_cache_misses"] == {"aclnnFusedAdamw": 4}


def test_sim_stats_report_the_cache_by_device_and_the_misses_by_operator():
    script = """
import torch, torch_fl
x = torch.empty(43, device="flagos:2")
torch_fl.sim.reset_stats()
x.fill_(0.5)  # a miss
x.fill_(0.5)  # a hit
x.fill_(0.75)  # a new scalar value: a miss
stats = torch_fl.sim.stats()
mine = stats["executor_cache"][2]
assert (mine["hits"], mine["misses"]) == (1, 2), mine
assert mine == torch.flagos.executor_cache_stats(2) | {"cached": mine["cached"]}, mine
assert all(stats["executor_cache"][d]["misses"] == 0 for d in (0, 1, 3)), stats["executor_cache"]
(op, misses), = stats["executor_cache_misses"].items()
assert op.startswith("aclnn") and "Fill" in op and misses == 2, stats["executor_cache_misses"]
torch_fl.sim.reset_stats()
stats = torch_fl.sim.stats()
assert stats["executor_cache_misses"] == {} and stats["executor_cache"][2]["hits"] == 0, stats
assert stats["executor_cache"][2]["cached"] >= 2  # a level: the reset keeps it
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def generate_twice(cache_implementation):
    """A tiny Llama's greedy generate, called twice: the second call's counts,
    and the first call's misses from its second new token on (its decode
    steps after the first one, which warms up the one-token shapes)."""
    transformers = pytest.importorskip("transformers")

    class CountsAtEachToken(transformers.generation.streamers.BaseStreamer):
        def __init__(self):
            self.taken = []

        def put(self, value):
            self.taken.append(dict(torch.flagos.executor_cache_stats(1)))

        def end(self):
            pass

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(config).eval().to("flagos:1")
    prompt = torch.randint(0, 64, (1, 5), generator=torch.Generator().manual_seed(1)).to("flagos:1")
    options = dict(max_new_tokens=8, min_new_tokens=8, do_sample=False, pad_token_id=0)
    if cache_implementation:
        options["cache_implementation"] = cache_implementation

    def work():
        counts = CountsAtEachToken()
        torch.flagos.reset_executor_cache_stats()
        with torch.no_grad():
            first = model.generate(prompt, streamer=counts, **options)
        end = torch.flagos.executor_cache_stats(1)
        decode_misses = end["misses"] - counts.taken[2]["misses"]  # taken[0]: the prompt
        torch.flagos.reset_executor_cache_stats()
        with torch.no_grad():
            second = model.generate(prompt, **options)
        assert torch.equal(first.cpu(), second.cpu())
        return decode_misses, torch.flagos.executor_cache_stats(1)

    return in_new_thread(work)


def test_llama_decode_repeats_without_a_miss():
    for cache_implementation in (None, "static"):
        _, second = generate_twice(cache_implementation)
        assert second["misses"] == 0 and second["hits"] > 100, (cache_implementation, second)


def test_llama_first_generation_misses_only_the_new_lengths():
    """The first generate sees each sequence length once: input_ids grows by
    a token a step (generate's cat, add, eq and copy on it: 4 launches), and
    with the dynamic cache so do the keys and values (their cat, the
    attention: 3 more). Each such launch is a new shape, which phase 1 must
    see; everything else hits. 6 decode steps of 100-150 launches each."""
    for cache_implementation in (None, "static"):
        decode_misses, _ = generate_twice(cache_implementation)
        assert 0 < decode_misses <= 8 * 6, (cache_implementation, decode_misses)



def test_adamw_on_flagos_matches_the_cpu():
    def train(device):
        torch.manual_seed(0)
        model = torch.nn.Linear(6, 3).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=True)
        x = torch.randn(16, 6, generator=torch.Generator().manual_seed(1)).to(device)
        for _ in range(5):
            optimizer.zero_grad()
            model(x).square().mean().backward()
            optimizer.step()
        return [p.detach().cpu() for p in model.parameters()]

    for got, expected in zip(train("flagos:1"), train("cpu")):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
