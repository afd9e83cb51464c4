"""The simulated Ascend runtime behind the flagos device.

Everything in this project runs on it when no NPU is present: several
devices, a per-thread current device, device-owned memory and launch
validation that rejects (or, in ``nan`` mode, silently corrupts) an operator
whose tensors, stream and workspace are not on the calling thread's current
device. Its counters are read through its own C API (``flagos_sim.h``),
of which the backend calls only the launch records and the stream drain,
for torch.profiler (docs/profiler.md).
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict

from torch_fl import _C

_LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
_runtime = None


def _lib() -> ctypes.CDLL:
    global _runtime
    if _runtime is None:
        # The backend already loaded this library; dlopen returns the same copy.
        lib = ctypes.CDLL(os.path.join(_LIB_DIR, "libflagos_sim_runtime.so"))
        lib.fsimStatsJson.restype = ctypes.c_char_p
        lib.fsimInjectFault.argtypes = [ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32]
        lib.fsimSetMismatchMode.argtypes = [ctypes.c_int]
        lib.fsimGetMismatchMode.restype = ctypes.c_int
        lib.fsimSetLenient.argtypes = [ctypes.c_int32]
        lib.fsimGetLenient.restype = ctypes.c_int32
        lib.fsimPointerDevice.argtypes = [ctypes.c_void_p]
        lib.fsimPointerDevice.restype = ctypes.c_int32
        lib.fsimHazardReport.restype = ctypes.c_char_p
        lib.fsimSetStreamMode.argtypes = [ctypes.c_int]
        lib.fsimGetStreamMode.restype = ctypes.c_int
        _runtime = lib
    return _runtime


def _int_keys(mapping: Dict[str, Any]) -> Dict[int, Any]:
    return {int(key): value for key, value in mapping.items()}


def stats() -> Dict[str, Any]:
    """Counters of the simulator and of the backend's CPU fallback.

    Keys: ``set_device_calls``, ``launches`` (device -> successful launches),
    ``rejected_launches``, ``mismatched_launches``, ``live_allocations``
    (device -> runtime allocations alive), ``live_bytes``, ``op_launches``
    (ACLNN operator -> launches), ``peer_copies``, ``failed_tasks`` (queued
    work that failed when it ran), ``hazards`` (unordered accesses, see
    :func:`hazard_report`), ``lenient_kernel_errors`` (kernels that failed and
    wrote NaN, see :func:`set_lenient`), ``fallback_ops`` (ATen op -> CPU
    fallback calls), and the backend's ACLNN executor cache:
    ``executor_cache`` (device -> ``hits``, ``misses``, ``evictions``,
    ``rebinds``, ``cached``, as ``torch.flagos.executor_cache_stats``) and
    ``executor_cache_misses`` (ACLNN operator -> launches that ran phase 1).
    """
    raw = json.loads(_lib().fsimStatsJson().decode())
    for key in ("launches", "live_allocations", "live_bytes"):
        raw[key] = _int_keys(raw[key])
    raw["fallback_ops"] = dict(_C._fallback_counts())
    raw["executor_cache"] = {d: dict(_C._executor_cache_stats(d)) for d in range(_C._device_count())}
    raw["executor_cache_misses"] = dict(_C._executor_cache_misses_by_operator())
    return raw


def reset_stats() -> None:
    """Zeroes the event counters, the executor cache's too (live allocations
    and cached executors keep counting)."""
    _lib().fsimResetStats()
    _C._reset_fallback_counts()
    _C._reset_executor_cache_stats()


_MODES = {"error": 0, "nan": 1}


def set_mismatch_mode(mode: str) -> None:
    """``error``: reject a launch whose devices disagree; ``nan``: let it
    "succeed" with NaN outputs, as real 910C hardware did."""
    if mode not in _MODES:
        raise ValueError(f"mismatch mode must be one of {sorted(_MODES)}, got {mode!r}")
    _lib().fsimSetMismatchMode(_MODES[mode])


def mismatch_mode() -> str:
    value = _lib().fsimGetMismatchMode()
    return next(name for name, code in _MODES.items() if code == value)


def set_lenient(on: bool) -> None:
    """Lenient kernels: the simulator's operators compute with ATen's CPU
    kernels, which check their arguments; CANN's kernels do not. When on, a
    kernel that ATen refuses on the stream writes NaN into its outputs and
    succeeds (counted as ``lenient_kernel_errors``), as a wrong result on
    hardware would: a check the backend's wrapper misses then shows as a
    wrong value, never as a stream error. Starts from FLAGOS_SIM_LENIENT."""
    _lib().fsimSetLenient(1 if on else 0)


def lenient() -> bool:
    return bool(_lib().fsimGetLenient())


def inject_fault(op: str, phase: int, count: int = 1) -> None:
    """Makes the next `count` calls of ACLNN operator `op` fail at `phase` (1 or 2)."""
    if phase not in (1, 2):
        raise ValueError(f"phase must be 1 or 2, got {phase}")
    _lib().fsimInjectFault(op.encode(), phase, count)


def clear_faults() -> None:
    _lib().fsimClearFaults()


def hazard_report() -> list:
    """The latest hazards the simulator saw (at most 32), one description each: accesses to one
    allocation, at least one a write, that no synchronization of the program orders (a kernel
    and a host read without a wait, two streams without an event, a free of memory queued work
    still uses). Decided from the order of runtime calls, not from timing; reset_stats clears it."""
    return [line for line in _lib().fsimHazardReport().decode().splitlines() if line]


_STREAM_MODES = {"async": 0, "lazy": 1}


def set_stream_mode(mode: str) -> None:
    """``async`` (default): each stream's worker runs its work as soon as it can; ``lazy``: work
    runs only once something waits for it (a synchronization, or a stream waiting for an event
    recorded after it), so a read that does not wait sees memory as it was before the work."""
    if mode not in _STREAM_MODES:
        raise ValueError(f"stream mode must be one of {sorted(_STREAM_MODES)}, got {mode!r}")
    _lib().fsimSetStreamMode(_STREAM_MODES[mode])


def stream_mode() -> str:
    value = _lib().fsimGetStreamMode()
    return next(name for name, code in _STREAM_MODES.items() if code == value)


def drain_streams() -> None:
    """Waits for (and in lazy mode runs) the work queued on every stream of every device."""
    _lib().fsimDrainStreams()


def pointer_device(address: int) -> int:
    """The simulated device that owns a device address, or -1."""
    return _lib().fsimPointerDevice(ctypes.c_void_p(address))

