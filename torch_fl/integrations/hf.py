"""The Hugging Face stack (accelerate, transformers, diffusers) on flagos.

These libraries name the accelerators they know (cuda, npu, xpu, mlu, ...)
and take the CPU, without a word, for any other: accelerate's
``get_max_memory()`` reports no flagos device, so ``device_map="auto"`` and
``"balanced"`` put every module on the CPU, ``Accelerator().device`` is the
CPU, and transformers' ``Trainer`` moves a flagos model back to the CPU.
A few functions decide this; each is wrapped when its module is imported
(or at once, if the module was imported before torch_fl):

- ``accelerate.utils.modeling.get_max_memory``: the flagos devices' free
  memory under integer keys, as accelerate reports GPUs (``torch.device(i)``
  is ``flagos:i`` while flagos is torch's accelerator).
- ``accelerate.state.PartialState.default_device``: ``flagos:LOCAL_RANK``
  under a launcher, else the current flagos device;
  ``PartialState._prepare_backend`` and ``set_device``: under a launcher,
  data-parallel training over hccl (MULTI_NPU) on ``flagos:LOCAL_RANK``.
- ``transformers.training_args.TrainingArguments._setup_devices``:
  accelerate's device instead of the CPU.
- ``safetensors.torch.load_file``: ``device="flagos:1"`` (diffusers' disk
  offloading, ``from_pretrained(device_map="flagos")``) as the index 1, the
  one form of a device safetensors takes that names no device type.

diffusers needs nothing of its own: it finds the device through
``torch.accelerator`` and the memory through accelerate. Each wrapper does
what the library's own function does when ``FLAGOS_HF_INTEGRATION=0`` (read
at each call), when flagos is not torch's accelerator, or when the library
already chose a device. docs/huggingface.md.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import sys
import warnings

import torch

OFF_VARIABLE = "FLAGOS_HF_INTEGRATION"

# The releases whose sources the wrappers were written against and tested
# with (tests/integrations); another minor release warns once.
CHECKED_VERSIONS = {"accelerate": "1.15", "transformers": "5.24", "diffusers": "0.42", "safetensors": "0.8"}


def enabled() -> bool:
    """False when FLAGOS_HF_INTEGRATION=0: every wrapper then does what the library does."""
    return os.environ.get(OFF_VARIABLE, "1") != "0"


def _flagos_is_the_accelerator() -> bool:
    if not enabled():
        return False
    accelerator = torch.accelerator.current_accelerator()
    return accelerator is not None and accelerator.type == "flagos" and torch.flagos.device_count() > 0


def _wrap_get_max_memory(modeling) -> None:
    library_get_max_memory = modeling.get_max_memory

    @functools.wraps(library_get_max_memory)
    def get_max_memory(max_memory=None):
        if not _flagos_is_the_accelerator():
            return library_get_max_memory(max_memory)
        count = torch.flagos.device_count()
        if max_memory is None:
            # Free memory, as accelerate reports a GPU's; devices first, then what accelerate adds (the CPU).
            found = {index: torch.flagos.mem_get_info(index)[0] for index in range(count)}
            return {**found, **library_get_max_memory(None)}
        # accelerate checks integer keys against CUDA's device count and
        # converts "10GiB" in the caller's dict (transformers reads it back).
        for key, value in max_memory.items():
            if isinstance(value, str):
                max_memory[key] = modeling.convert_file_size_to_int(value)
        devices = sorted(key for key in max_memory if isinstance(key, int))
        missing = [index for index in devices if not 0 <= index < count]
        if missing:
            warnings.warn(f"get_max_memory: flagos devices {missing} do not exist; this process sees "
                          f"flagos:0 to flagos:{count - 1}", stacklevel=2)
        others = library_get_max_memory({k: v for k, v in max_memory.items() if not isinstance(k, int)})
        return {**{index: max_memory[index] for index in devices}, **others}

    _replace_everywhere(library_get_max_memory, get_max_memory)


def _wrap_default_device(state) -> None:
    library_default_device = state.PartialState.default_device

    def default_device(self) -> torch.device:
        device = library_default_device.fget(self)
        if device.type != "cpu" or not _flagos_is_the_accelerator():
            return device
        if int(os.environ.get("WORLD_SIZE", 1)) > 1 and getattr(self, "distributed_type", None) == "NO":
            # Only with a backend other than hccl: _prepare_backend below takes MULTI_NPU otherwise.
            warnings.warn(f"accelerate runs this multi-process job as independent processes on flagos (backend "
                          f"{getattr(self, 'backend', None)!r}): nothing synchronizes gradients. Leave the backend "
                          f"unset or 'hccl' (docs/huggingface.md)", stacklevel=2)
        local_rank = int(os.environ.get("LOCAL_RANK", -1))
        index = local_rank % torch.flagos.device_count() if local_rank != -1 else torch.flagos.current_device()
        return torch.device("flagos", index)

    default_device.__doc__ = library_default_device.__doc__
    state.PartialState.default_device = property(default_device)


def _wrap_distributed_type(state) -> None:
    """Under a launcher (LOCAL_RANK set), accelerate picks a distributed type and a backend only for the
    accelerators it names; for any other it runs each process on its own and nothing synchronizes
    gradients. On flagos this takes MULTI_NPU with hccl: flagos stands for Ascend NPUs, and accelerate
    treats that type device-generically (DDP with device_ids=[local rank], barriers, RNG broadcast) except
    where it calls torch.npu to make the device current, which set_device below does with torch.flagos."""
    partial_state = state.PartialState
    multi_npu = state.DistributedType.MULTI_NPU
    library_prepare_backend = partial_state._prepare_backend
    library_set_device = partial_state.set_device

    def _prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        chosen, distributed_type = library_prepare_backend(self, cpu, sagemaker_dp, backend)
        if (distributed_type == "NO" and not cpu and not sagemaker_dp and backend in (None, "hccl")
                and int(os.environ.get("LOCAL_RANK", -1)) != -1 and _flagos_is_the_accelerator()):
            return "hccl", multi_npu
        return chosen, distributed_type

    def set_device(self) -> None:
        if self.device is None and self.distributed_type == multi_npu and _flagos_is_the_accelerator():
            self.device = torch.device("flagos", self.local_process_index % torch.flagos.device_count())
            torch.flagos.set_device(self.device)
            return
        library_set_device(self)

    for wrapper, library in ((_prepare_backend, library_prepare_backend), (set_device, library_set_device)):
        functools.update_wrapper(wrapper, library)
        setattr(partial_state, library.__name__, wrapper)


def _wrap_state(state) -> None:
    _wrap_default_device(state)
    _wrap_distributed_type(state)


def _wrap_setup_devices(training_args) -> None:
    arguments = training_args.TrainingArguments
    library_setup_devices = arguments.__dict__["_setup_devices"].func

    def _setup_devices(self) -> torch.device:
        device = library_setup_devices(self)
        chosen = getattr(getattr(self, "distributed_state", None), "device", None)
        # transformers takes accelerate's device only for the accelerators it names; for any other, the CPU.
        if device.type == "cpu" and chosen is not None and chosen.type == "flagos" and _flagos_is_the_accelerator():
            device = chosen
            torch.flagos.set_device(device)
            self._n_gpu = 1
        return device

    _setup_devices.__doc__ = library_setup_devices.__doc__
    wrapped = functools.cached_property(_setup_devices)
    wrapped.__set_name__(arguments, "_setup_devices")
    arguments._setup_devices = wrapped


def _device_for_safetensors(device):
    """safetensors' Rust side takes only the device names it knows (cpu, cuda, npu, mps, ...) or an
    integer, which torch reads as that index of the accelerator: flagos:i becomes i."""
    if isinstance(device, (str, torch.device)) and _flagos_is_the_accelerator():
        try:
            parsed = torch.device(device)
        except RuntimeError:
            return device
        if parsed.type == "flagos":
            return torch.flagos.current_device() if parsed.index is None else parsed.index
    return device


def _wrap_load_file(safetensors_torch) -> None:
    library_load_file = safetensors_torch.load_file

    @functools.wraps(library_load_file)
    def load_file(filename, device="cpu", **kwargs):
        return library_load_file(filename, _device_for_safetensors(device), **kwargs)

    _replace_everywhere(library_load_file, load_file)


# module -> the wrapper it needs
_WRAPPERS = {
    "accelerate.utils.modeling": _wrap_get_max_memory,
    "accelerate.state": _wrap_state,
    "transformers.training_args": _wrap_setup_devices,
    "safetensors.torch": _wrap_load_file,
}
_wrapped = set()
# Modules that were still executing when torch_fl was imported (their own
# `import torch` loaded it): wrapped once they have finished.
_pending = set()


def _replace_everywhere(old, new) -> None:
    """`from accelerate.utils import get_max_memory` copies the function into the importing module."""
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in CHECKED_VERSIONS:
            continue
        for attr, value in list(vars(module).items()):
            if value is old:
                setattr(module, attr, new)


_version_warned = set()


def _check_version(library: str) -> str:
    version = importlib.metadata.version(library)
    if version.split(".")[:2] != CHECKED_VERSIONS[library].split(".") and library not in _version_warned:
        _version_warned.add(library)
        warnings.warn(f"torch_fl teaches {library} the flagos device by wrapping functions of {library} "
                      f"{CHECKED_VERSIONS[library]}; with {library} {version}, check where models and training "
                      f"land (docs/huggingface.md; {OFF_VARIABLE}=0 turns the integration off)", stacklevel=3)
    return version


def _wrap(name: str, module) -> None:
    if name in _wrapped:
        return
    _wrapped.add(name)
    _pending.discard(name)
    library = name.split(".")[0]
    version = _check_version(library)
    try:
        _WRAPPERS[name](module)
    except (AttributeError, KeyError) as error:
        warnings.warn(f"torch_fl could not teach {library} {version} the flagos device ({name}: {error}); it may "
                      f"place models or training on the CPU (docs/huggingface.md)", stacklevel=3)


def _wrap_finished_modules() -> None:
    for name in list(_pending):
        module = sys.modules.get(name)
        if module is not None and not getattr(module.__spec__, "_initializing", False):
            _wrap(name, module)


class _WrappingLoader:
    """The module's own loader, then its wrapper."""

    def __init__(self, loader, name: str):
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _wrap(self._name, module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _WrapOnImport:
    """A sys.meta_path finder: the modules of _WRAPPERS load with _WrappingLoader. Every import
    also wraps the modules that were still executing when torch_fl was imported."""

    def find_spec(self, name, path=None, target=None):
        if _pending:
            _wrap_finished_modules()
        if name not in _WRAPPERS or name in _wrapped:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _WrappingLoader(spec.loader, name)
        return spec


def install() -> None:
    """Wraps the modules already imported and those imported later. Called by `import torch_fl`."""
    if any(isinstance(finder, _WrapOnImport) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, _WrapOnImport())
    for name in _WRAPPERS:
        if name in sys.modules:
            _pending.add(name)
    _wrap_finished_modules()
