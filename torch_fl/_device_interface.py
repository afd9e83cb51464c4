"""The flagos device as TorchDynamo and Inductor see it: a DeviceInterface
(torch._dynamo.device_interface) backed by torch.flagos, as CudaInterface is
backed by torch.cuda.

Inductor asks a device's interface for its properties, current device and
streams while it lowers a graph (a LayerNorm's var_mean asks it), and Dynamo
asks it to trace stream and event calls; without one both raise "No
interface for device flagos".

Imported when torch.compile first builds its Inductor backend
(torch_fl/_compile.py) or Inductor first loads flagos's code generators
(torch_fl/_inductor.py): importing Dynamo costs seconds.
"""

from __future__ import annotations

import torch
from torch._dynamo.device_interface import DeviceInterface, caching_worker_current_devices
from torch._dynamo.device_interface import caching_worker_device_properties, register_interface_for_device

from torch_fl import _C, flagos


class FlagosInterface(DeviceInterface):
    device = flagos.device  # type: ignore[assignment]
    Event = flagos.Event  # type: ignore[assignment]
    Stream = flagos.Stream  # type: ignore[assignment]

    class Worker:
        """Device queries for Inductor's compile workers, answered from what the
        main process recorded (a worker must not touch the runtime)."""

        @staticmethod
        def set_device(device: int) -> None:
            caching_worker_current_devices["flagos"] = device

        @staticmethod
        def current_device() -> int:
            if "flagos" in caching_worker_current_devices:
                return caching_worker_current_devices["flagos"]
            return flagos.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None):
            index = FlagosInterface.Worker.current_device() if device is None else flagos._index(device)
            if "flagos" not in caching_worker_device_properties:
                caching_worker_device_properties["flagos"] = [
                    flagos.get_device_properties(i) for i in range(flagos.device_count())]
            return caching_worker_device_properties["flagos"][index]

    current_device = staticmethod(flagos.current_device)
    set_device = staticmethod(flagos.set_device)  # type: ignore[assignment]
    device_count = staticmethod(flagos.device_count)
    is_available = staticmethod(flagos.is_available)
    stream = staticmethod(flagos.stream)  # type: ignore[assignment]
    current_stream = staticmethod(flagos.current_stream)  # type: ignore[assignment]
    set_stream = staticmethod(flagos.set_stream)  # type: ignore[assignment]
    synchronize = staticmethod(flagos.synchronize)  # type: ignore[assignment]
    get_device_properties = staticmethod(flagos.get_device_properties)  # type: ignore[assignment]
    get_compute_capability = staticmethod(flagos.get_device_capability)  # type: ignore[assignment]
    memory_allocated = staticmethod(flagos.memory_allocated)  # type: ignore[assignment]

    @staticmethod
    def exchange_device(device: int) -> int:
        return _C._exchange_device(device)

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        # -1 means "no device was current before": nothing to restore.
        return _C._exchange_device(device) if device >= 0 else -1

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        flagos.set_stream(flagos.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type))

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return flagos.current_stream(device_idx).stream_id

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return flagos.is_bf16_supported(including_emulation)

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        """False: Triton has no Ascend backend here, so Inductor generates no flagos kernels."""
        return False


register_interface_for_device("flagos", FlagosInterface)
for _index in range(flagos.device_count()):
    register_interface_for_device(f"flagos:{_index}", FlagosInterface)
