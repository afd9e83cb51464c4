"""Eight threads at once, each with its own current device, each running 2000
guarded ops on tensors of a device that is (for most threads) not its current
one: exact results, no rejected launch, every thread's current device
unchanged at the end. The current device is per thread, so one thread's guard
must never move another thread's launches."""

from __future__ import annotations

import threading

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

pytestmark = pytest.mark.skipif(torch.flagos.device_count() < 4, reason="needs four flagos devices")

THREADS = 8
STEPS = 1000  # two ops per step: 2000 ops per thread


def program(x: torch.Tensor, seed: int) -> torch.Tensor:
    """x = x + 1 alternating with a multiplication; the same float ops on any device."""
    factor = 0.5 + 0.125 * (seed % 4)
    for _ in range(STEPS):
        x = x + 1
        x = x * factor
    return x


def test_threads_with_their_own_current_devices():
    start = torch.arange(4, dtype=torch.float32)
    barrier = threading.Barrier(THREADS)
    results: dict[int, tuple] = {}
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            current = i % 4
            tensors_on = (i + 1 + i // 4) % 4  # threads 3 and 6 use their current device, the rest another
            torch.flagos.set_device(current)
            x = start.to(f"flagos:{tensors_on}")
            barrier.wait()
            y = program(x, i)
            results[i] = (current, tensors_on, torch.flagos.current_device(), y.device, y.cpu())
        except BaseException as error:  # noqa: BLE001  (reported by the main thread)
            errors.append(error)
            barrier.abort()

    torch_fl.sim.reset_stats()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = torch_fl.sim.stats()

    assert not errors, errors
    assert stats["rejected_launches"] == 0 and stats["mismatched_launches"] == 0, stats
    assert sum(stats["launches"].values()) >= THREADS * 2 * STEPS
    for i in range(THREADS):
        current, tensors_on, current_after, device, value = results[i]
        assert current_after == current, f"thread {i}: flagos:{current_after} is current, not flagos:{current}"
        assert device == torch.device("flagos", tensors_on)
        assert torch.equal(value, program(start, i)), f"thread {i}: {value}"
    # Every device ran the launches of the threads whose tensors it holds.
    holders = {results[i][1] for i in range(THREADS)}
    assert all(stats["launches"][d] > 0 for d in holders)
