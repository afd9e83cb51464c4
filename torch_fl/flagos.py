"""``torch.flagos``: device management for the flagos device."""

from __future__ import annotations

from typing import Optional, Union

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


# ---- streams and events ------------------------------------------------------


class Stream(torch.Stream):
    """A flagos stream, as ``torch.cuda.Stream``: an in-order queue of device work.

    Work queued on a stream runs asynchronously, after the call that queued it
    has returned; ``query()`` says whether it has all run, ``synchronize()``
    waits for it, ``wait_stream(other)`` and ``wait_event(event)`` order this
    stream after another one's work (across devices too), and
    ``record_event()`` marks its current end. ``Stream(device)`` creates a
    new stream on ``device`` (the current device by default); ``with
    torch.flagos.stream(s):`` (or ``with s:``) makes it current.
    """

    def __new__(cls, device: DeviceLike = None, priority: int = 0, **kwargs):
        if kwargs:  # an existing stream: stream_id, device_index, device_type
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=torch.device("flagos", _index(device)), priority=priority)

    def record_event(self, event: Optional[torch.Event] = None) -> torch.Event:
        """Records `event` (a new one by default) on this stream and returns it."""
        if event is None:
            event = Event(device=self.device_index)
        event.record(self)
        return event

    def __repr__(self) -> str:
        return f"<torch.flagos.Stream device=flagos:{self.device_index} stream_id={self.stream_id}>"


class _EventType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, torch.Event) and obj.device.type == "flagos"


class Event(metaclass=_EventType):
    """A flagos event, as ``torch.cuda.Event``: a point in a stream's work.

    ``record(stream)`` marks the stream's current end (the current stream by
    default); ``query()`` says whether the work before it has run,
    ``synchronize()`` waits for it, ``wait(stream)`` makes a stream wait for
    it, and with ``enable_timing=True`` ``elapsed_time(end)`` gives the
    milliseconds between two completed events (aclrtEventElapsedTime).

    The object is a ``torch.Event`` of a flagos device (``torch.Event``'s
    methods accept only its own type as the other event), and every flagos
    ``torch.Event`` is an instance of this class.
    """

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                device: DeviceLike = None) -> torch.Event:
        if interprocess:
            raise RuntimeError("torch.flagos.Event(interprocess=True) is not supported: flagos events cannot be "
                               "shared between processes")
        return torch.Event(device=torch.device("flagos", _index(device)), enable_timing=enable_timing,
                           blocking=blocking, interprocess=interprocess)


def _stream(stream_id: int, index: int) -> Stream:
    return Stream(stream_id=stream_id, device_index=index, device_type=_C._device_type())


def current_stream(device: DeviceLike = None) -> Stream:
    """The current stream of `device` on this thread (the default stream unless changed)."""
    index = _index(device)
    return _stream(_C._current_stream(index), index)


def default_stream(device: DeviceLike = None) -> Stream:
    index = _index(device)
    return _stream(_C._default_stream(index), index)


def set_stream(stream: torch.Stream) -> None:
    """Makes `stream` the current stream of its device, and its device current (as torch.cuda.set_stream)."""
    if stream is None:
        return
    _C._exchange_stream(stream.stream_id, stream.device_index)
    _C._set_device(stream.device_index)


class StreamContext:
    """Makes a stream the current stream of its device, and its device current, for a
    ``with`` block (as ``torch.cuda.StreamContext``); both are restored after it.
    ``None`` does nothing."""

    def __init__(self, stream: Optional[torch.Stream]):
        if stream is not None and stream.device_type != _C._device_type():
            raise ValueError(f"torch.flagos.stream takes a flagos stream, got {stream}")
        self.stream = stream
        self._saved: list = []

    def __enter__(self):
        s = self.stream
        if s is not None:
            previous_device = _C._exchange_device(s.device_index)
            previous = _C._exchange_stream(s.stream_id, s.device_index)
            self._saved.append((previous_device, previous))
        return self

    def __exit__(self, *exc):
        s = self.stream
        if s is not None:
            previous_device, previous = self._saved.pop()
            _C._exchange_stream(previous, s.device_index)
            _C._set_device(previous_device)
        return False


def stream(s: Optional[torch.Stream]) -> StreamContext:
    """``with torch.flagos.stream(s):`` runs the block with `s` current (as torch.cuda.stream)."""
    return StreamContext(s)


def is_current_stream_capturing() -> bool:
    """Always False: flagos has no graph capture (torch.flagos.graph raises)."""
    return False


def can_device_access_peer(device: DeviceLike, peer_device: DeviceLike) -> bool:
    """Whether `device` can read `peer_device`'s memory directly (aclrtDeviceCanAccessPeer);
    False for the same device, as torch.cuda answers."""
    return _C._can_access_peer(_index(device, optional=False), _index(peer_device, optional=False))


def is_initialized() -> bool:
    """The backend initializes its runtime at import: always True once torch_fl is imported."""
    return True


# What PyTorch's own code reads of a device module besides its functions, as
# it reads torch.cuda's: torch.utils.checkpoint saves and restores a device's
# RNG state only when `_initialized` is true (without it, a recomputed
# forward draws other dropout masks and the gradients are wrong).
_initialized = True


def init() -> None:
    """Nothing to do: the runtime is initialized when torch_fl is imported (as after torch.cuda.init)."""


def _lazy_init() -> None:
    """As torch.cuda._lazy_init, which code written for CUDA calls: the runtime is already up."""


class device_of(device):
    """Makes the device of `obj` (a tensor) current for a ``with`` block; a CPU tensor changes nothing."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "flagos" else None)


# ---- device properties ---------------------------------------------------------

# The Da Vinci architecture (CANN's NpuArch) of the SoCs whose runtime does not
# answer aclrtGetDeviceInfo(ACL_DEV_ATTR_NPU_ARCH) (910B's reports no NPU arch),
# from CANN's platform configuration (platform_config/cann/<SoC>.ini, NpuArch=).
_NPU_ARCH = {
    **dict.fromkeys(("Ascend910A", "Ascend910B", "Ascend910ProA", "Ascend910ProB", "Ascend910PremiumA"), 1001),
    **dict.fromkeys(("Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4", "Ascend910B4-1",
                     "Ascend910_9362", "Ascend910_9363", "Ascend910_9372", "Ascend910_9381", "Ascend910_9382",
                     "Ascend910_9391", "Ascend910_9392"), 2201),
    **dict.fromkeys(("Ascend310P1", "Ascend310P3", "Ascend310P5", "Ascend310P7"), 2002),
    **dict.fromkeys(("Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4"), 3002),
}


class _FlagosDeviceProperties:
    """What torch.flagos.get_device_properties returns, named as CUDA's properties are where
    they mean the same: ``name`` (the SoC, aclrtGetSocName), ``total_memory`` (bytes),
    ``multi_processor_count`` (AI cores), ``L2_cache_size`` (bytes), ``major``/``minor``
    (get_device_capability), plus ``cube_core_count`` and ``vector_core_count``."""

    __slots__ = ("name", "total_memory", "multi_processor_count", "cube_core_count", "vector_core_count",
                 "L2_cache_size", "npu_arch", "major", "minor")

    def __init__(self, raw: dict):
        self.name = raw["name"]
        self.total_memory = raw["total_memory"]
        self.multi_processor_count = raw["ai_core_count"]
        self.cube_core_count = raw["cube_core_count"]
        self.vector_core_count = raw["vector_core_count"]
        self.L2_cache_size = raw["l2_cache_size"]
        self.npu_arch = raw["npu_arch"] if raw["npu_arch"] is not None else _NPU_ARCH.get(self.name)
        if self.npu_arch is None:
            raise RuntimeError(f"flagos: the NPU architecture of SoC {self.name!r} is unknown: the runtime does not "
                               "report it and torch_fl's table (torch_fl/flagos.py, _NPU_ARCH) has no entry for it")
        self.major, self.minor = divmod(self.npu_arch, 100)

    def __repr__(self) -> str:
        return (f"_FlagosDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device: DeviceLike = None) -> _FlagosDeviceProperties:
    """The properties of `device` (the current device by default), from the runtime."""
    return _FlagosDeviceProperties(_C._device_properties(_index(device)))


def get_device_name(device: DeviceLike = None) -> str:
    """The SoC name of `device`, e.g. "Ascend910B3"."""
    return get_device_properties(device).name


def get_device_capability(device: DeviceLike = None) -> tuple:
    """(major, minor) of `device`: its Da Vinci architecture (CANN's NpuArch, e.g. 2201 on
    910B and A3) split as divmod(NpuArch, 100), so (22, 1) on 910B. docs/streams.md."""
    properties = get_device_properties(device)
    return properties.major, properties.minor


def mem_get_info(device: DeviceLike = None) -> tuple:
    """(free, total) bytes of `device`'s memory, from the runtime (aclrtGetMemInfo)."""
    return tuple(_C._mem_get_info(_index(device)))


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


# torch.cuda's deprecated names of the same figures.
def memory_cached(device: DeviceLike = None) -> int:
    return memory_reserved(device)


def max_memory_cached(device: DeviceLike = None) -> int:
    return max_memory_reserved(device)


def reset_max_memory_allocated(device: DeviceLike = None) -> None:
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: DeviceLike = None) -> None:
    reset_peak_memory_stats(device)


def host_memory_stats() -> dict:
    """Statistics of the pinned host memory allocator, named as torch.cuda.host_memory_stats names
    them ("allocations.current", "allocated_bytes.peak", "num_host_alloc", ...)."""
    return dict(_C._host_memory_stats())


def reset_peak_host_memory_stats() -> None:
    _C._host_reset_peak_stats()


def reset_accumulated_host_memory_stats() -> None:
    _C._host_reset_accumulated_stats()


def executor_cache_stats(device: DeviceLike = None) -> dict:
    """The ACLNN executor cache's counters for the launches on `device`, by every thread.

    ``hits`` (phase 1 skipped), ``misses`` (phase 1 ran), ``evictions``
    (cached executors destroyed to make room, or not admitted), ``rebinds``
    (tensor addresses a hit moved) and ``cached`` (executors held now). Not
    part of torch.cuda: CUDA kernels have no host-side phase 1 to cache.
    """
    return dict(_C._executor_cache_stats(_index(device)))


def reset_executor_cache_stats() -> None:
    """Zeroes every device's counters and the misses by operator of
    ``torch_fl.sim.stats()`` (``cached`` is a level and stays)."""
    _C._reset_executor_cache_stats()


# What an allocation that does not fit raises (the caching allocator, the pinned allocator).
OutOfMemoryError = torch.OutOfMemoryError


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


def _get_generator(device: torch.device) -> torch.Generator:
    """The default generator of `device` (AOTAutograd's RNG functionalization asks for it)."""
    return default_generators[_index(device)]


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


def is_tf32_supported() -> bool:
    """False: flagos has no TF32 matmul mode (torch.backends.cuda.matmul.allow_tf32 does not apply)."""
    return False


# ---- torch.compile -----------------------------------------------------------------

_INDUCTOR_HOOKS = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


# torch.cuda names flagos does not provide, each with the reason (docs/torch-cuda-api.md).
_UNSUPPORTED = {
    **dict.fromkeys(("graph", "CUDAGraph", "graphs", "make_graphed_callables", "graph_pool_handle"),
                    "flagos has no graph capture (CANN's aclmdlRI capture is not wired to PyTorch); run the model "
                    "eagerly or with torch.compile"),
    **dict.fromkeys(("ExternalStream", "get_stream_from_external"),
                    "flagos streams are created by torch_fl; wrapping a stream made elsewhere is not supported"),
    **dict.fromkeys(("MemPool", "use_mem_pool", "CUDAPluggableAllocator", "change_current_allocator",
                     "caching_allocator_alloc", "caching_allocator_delete", "memory_snapshot",
                     "set_per_process_memory_fraction", "get_per_process_memory_fraction"),
                    "flagos has one caching allocator without memory pools, pluggable allocators, snapshots or "
                    "memory fractions; use torch.flagos.memory_stats / memory_summary"),
    **dict.fromkeys(("nccl",), "use torch.distributed with a flagos-capable backend; there is no NCCL"),
    **dict.fromkeys(("nvtx", "jiterator", "cudart", "tunable", "gds", "green_contexts", "GreenContext"),
                    "it is specific to NVIDIA's CUDA toolkit"),
    **dict.fromkeys(("utilization", "temperature", "power_draw", "clock_rate", "list_gpu_processes",
                     "device_memory_used"),
                    "the simulated runtime reports no device telemetry (on CANN use npu-smi)"),
    **dict.fromkeys(("set_sync_debug_mode", "get_sync_debug_mode"),
                    "flagos has no synchronization debug mode; the simulator's hazard report "
                    "(torch_fl.sim.hazard_report) finds unordered accesses instead"),
    **dict.fromkeys(("ipc_collect",), "flagos tensors cannot be shared between processes"),
    **dict.fromkeys(("get_arch_list", "get_gencode_flags"),
                    "flagos kernels are not compiled per architecture; see get_device_capability"),
    **dict.fromkeys(("current_blas_handle", "current_solver_handle"), "there is no cuBLAS/cuSOLVER handle"),
    **dict.fromkeys(("caching_allocator_enable", "caching_allocator_disabled", "get_allocator_backend"),
                    "the caching allocator is switched with the environment variable FLAGOS_ALLOC_CACHE=0"),
    **dict.fromkeys(("memory_usage",), "the simulated runtime reports no device telemetry (on CANN use npu-smi)"),
    **dict.fromkeys(("amp",), "torch.cuda.amp is deprecated in PyTorch; use torch.amp.autocast('flagos') and "
                    "torch.amp.GradScaler('flagos')"),
    **dict.fromkeys(("profiler",), "there is no flagos profiler hook; use torch.profiler on the CPU side and "
                    "torch.flagos.Event(enable_timing=True) for device time"),
}


def __getattr__(name: str):
    # Inductor looks these up on the device module when it first compiles a
    # flagos graph (torch_fl/_inductor.py); importing Inductor costs seconds.
    if name in _INDUCTOR_HOOKS:
        from torch_fl import _inductor

        return getattr(_inductor, name)
    if name in _UNSUPPORTED:
        raise AttributeError(f"torch.flagos.{name} is not supported: {_UNSUPPORTED[name]} "
                             f"(torch.cuda.{name} has no flagos equivalent; see docs/torch-cuda-api.md)")
    raise AttributeError(f"module 'torch.flagos' has no attribute {name!r}")
