"""``torch.flagos``: device management for the flagos device."""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional, Union

import torch

from torch_fl import _C

DeviceLike = Union[int, str, torch.device, None]


def _index(device: DeviceLike, optional: bool = True) -> int:
    """The device index that `device` names; None means the current device."""
    if device is None and optional:
        return _C._current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "flagos":
            raise ValueError(f"expected a flagos device, got {device}")
        return _C._current_device() if device.index is None else device.index
    raise TypeError(f"expected a flagos device index, string or torch.device, got {device!r}")


def is_available() -> bool:
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._current_device()


def set_device(device: DeviceLike) -> None:
    """Makes `device` current for this thread. A bad index raises and
    changes nothing."""
    _C._set_device(_index(device, optional=False))


def synchronize(device: DeviceLike = None) -> None:
    """Waits for the work queued on `device` (default: the current device)."""
    _C._synchronize(_index(device))


class device:
    """Context manager that makes a device current and restores the previous one."""

    def __init__(self, device: DeviceLike):
        self.idx = -1 if device is None else _index(device, optional=False)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _C._exchange_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _C._set_device(self.prev_idx)
        return False


def _stream(stream_id: int, index: int) -> torch.Stream:
    return torch.Stream(stream_id=stream_id, device_index=index, device_type=_C._device_type())


def current_stream(device: DeviceLike = None) -> torch.Stream:
    """The current stream of `device` on this thread (the default stream unless changed)."""
    index = _index(device)
    return _stream(_C._current_stream(index), index)


def default_stream(device: DeviceLike = None) -> torch.Stream:
    index = _index(device)
    return _stream(_C._default_stream(index), index)


def set_stream(stream: torch.Stream) -> None:
    _C._exchange_stream(stream.stream_id, stream.device_index)


@contextlib.contextmanager
def stream(s: Optional[torch.Stream]) -> Iterator[None]:
    """Makes `s` the current stream of its device for the block."""
    if s is None:
        yield
        return
    previous = _C._exchange_stream(s.stream_id, s.device_index)
    try:
        yield
    finally:
        _C._exchange_stream(previous, s.device_index)


def memory_stats(device: DeviceLike = None) -> dict:
    """The caching allocator's statistics of `device`, named as torch.cuda.memory_stats names them."""
    return dict(sorted(_C._memory_stats(_index(device)).items()))


def memory_allocated(device: DeviceLike = None) -> int:
    """Bytes in live flagos tensors on `device`."""
    return _C._memory_stats(_index(device))["allocated_bytes.all.current"]


def max_memory_allocated(device: DeviceLike = None) -> int:
    """The peak of memory_allocated since the start or the last reset_peak_memory_stats."""
    return _C._memory_stats(_index(device))["allocated_bytes.all.peak"]


def memory_reserved(device: DeviceLike = None) -> int:
    """Bytes the allocator holds from the runtime on `device` (live or cached)."""
    return _C._memory_stats(_index(device))["reserved_bytes.all.current"]


def max_memory_reserved(device: DeviceLike = None) -> int:
    return _C._memory_stats(_index(device))["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: DeviceLike = None) -> None:
    _C._reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device: DeviceLike = None) -> None:
    _C._reset_accumulated_memory_stats(_index(device))


def memory_summary(device: DeviceLike = None, abbreviated: bool = False) -> str:
    """A table of memory_stats, in the spirit of torch.cuda.memory_summary."""
    index = _index(device)
    stats = memory_stats(index)
    rows = [("Allocated memory", "allocated_bytes", True), ("Active memory", "active_bytes", True),
            ("Requested memory", "requested_bytes", True), ("Reserved memory", "reserved_bytes", True),
            ("Allocations", "allocation", False), ("Active allocs", "active", False),
            ("Device reserved segments", "segment", False)]
    width = 75
    lines = ["=" * width, f" flagos:{index} caching allocator (torch_fl)".ljust(width), "-" * width,
             f"{'Metric':<28}{'Cur Usage':>12}{'Peak Usage':>12}{'Tot Alloc':>12}{'Tot Freed':>11}", "-" * width]

    def show(value: int, as_bytes: bool) -> str:
        if not as_bytes:
            return str(value)
        for unit in ("B", "KiB", "MiB", "GiB"):
            if abs(value) < 1024 or unit == "GiB":
                return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
            value /= 1024
        return str(value)

    for title, key, as_bytes in rows:
        values = [stats[f"{key}.all.{field}"] for field in ("current", "peak", "allocated", "freed")]
        lines.append(f"{title:<28}" + "".join(f"{show(v, as_bytes):>12}" for v in values[:3])
                     + f"{show(values[3], as_bytes):>11}")
    lines += ["-" * width,
              f"{'Alloc retries':<28}{stats['num_alloc_retries']:>12}   OOMs: {stats['num_ooms']}", "=" * width]
    return "\n".join(lines) + "\n"


def empty_cache() -> None:
    _C._empty_cache()


def _is_in_bad_fork() -> bool:
    return False


# ---- random numbers: one (seed, offset) generator per device ----------------

default_generators: tuple = tuple(_C._default_generator(index) for index in range(_C._device_count()))


def manual_seed(seed: int) -> None:
    """Seeds the generator of the current device."""
    default_generators[current_device()].manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds the generator of every device (torch.manual_seed calls this)."""
    for generator in default_generators:
        generator.manual_seed(int(seed))


def seed() -> None:
    """Seeds the generator of the current device with a random number."""
    default_generators[current_device()].seed()


def seed_all() -> None:
    for generator in default_generators:
        generator.seed()


def initial_seed() -> int:
    """The seed of the current device's generator."""
    return default_generators[current_device()].initial_seed()


def get_rng_state(device: DeviceLike = "flagos") -> torch.Tensor:
    """The generator state of `device`: a uint8 CPU tensor (the seed, then the offset)."""
    return default_generators[_index(device)].get_state()


def set_rng_state(new_state: torch.Tensor, device: DeviceLike = "flagos") -> None:
    default_generators[_index(device)].set_state(new_state)


def get_rng_state_all() -> list:
    return [generator.get_state() for generator in default_generators]


def set_rng_state_all(new_states) -> None:
    for generator, state in zip(default_generators, new_states):
        generator.set_state(state)


# ---- automatic mixed precision -------------------------------------------------


def get_amp_supported_dtype() -> list:
    """The dtypes torch.autocast("flagos") may cast to."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


# ---- torch.compile -----------------------------------------------------------------

_INDUCTOR_HOOKS = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


def __getattr__(name: str):
    # Inductor looks these up on the device module when it first compiles a
    # flagos graph (torch_fl/_inductor.py); importing Inductor costs seconds.
    if name in _INDUCTOR_HOOKS:
        from torch_fl import _inductor

        return getattr(_inductor, name)
    raise AttributeError(f"module 'torch.flagos' has no attribute {name!r}")
