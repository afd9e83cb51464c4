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


def memory_allocated(device: DeviceLike = None) -> int:
    """Bytes in live flagos tensors on `device`."""
    return _C._memory_stats(_index(device))["allocated_bytes"]


def memory_reserved(device: DeviceLike = None) -> int:
    """Bytes the allocator holds from the runtime on `device` (live or cached)."""
    return _C._memory_stats(_index(device))["reserved_bytes"]


def empty_cache() -> None:
    _C._empty_cache()


def _is_in_bad_fork() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Seeds the generator of the current device."""
    _C._manual_seed(current_device(), int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds the generator of every device (torch.manual_seed calls this)."""
    for index in range(device_count()):
        _C._manual_seed(index, int(seed))
