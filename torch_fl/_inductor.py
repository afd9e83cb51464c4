"""torch.compile on flagos, through Inductor's own PrivateUse1 hooks.

Inductor asks the device module (torch.flagos) for a `Scheduling` and its
wrapper code generators. Inductor cannot generate kernels for Ascend, so
torch.compile runs flagos graphs with Inductor's lite options, where every
op is an ATen kernel (here: a flagos kernel) and Inductor keeps its graph
capture and its wrapper; torch_fl/_compile.py chooses them for any mode.
Only an option that asks for generated kernels on flagos reaches this
Scheduling, and it raises an error that says so and names the fix.

Device placement: Inductor makes a device current around generated code
only for the devices it knows as GPUs, and allocates buffers as
`device='<type>'`, relying on that. The flagos wrapper writes every buffer's
device with its index instead, and flagos kernels launch on their tensors'
device, so a compiled graph on flagos:1 runs there whatever device is
current.

Imported lazily (torch.flagos.__getattr__): importing Inductor costs seconds.
"""

from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides, register_device_op_overrides
from torch._inductor.codegen.wrapper import PythonWrapperCodegen as _PythonWrapperCodegen
from torch._inductor.codegen.wrapper import SubgraphPythonWrapperCodegen
from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen
from torch._inductor.scheduler import BaseScheduling

from torch_fl import _device_interface  # noqa: F401  (Inductor asks it while lowering)

WHY = ("torch.compile cannot generate flagos kernels: Inductor has no code generator for Ascend NPUs. "
       "flagos graphs run every op as a flagos kernel (Inductor's lite options); remove the option that "
       "asks for generated kernels (fallback_by_default=False, or a region marked for Inductor compilation)")


class FlagosDeviceOpOverrides(DeviceOpOverrides):
    """What Inductor's Python wrapper writes to switch and synchronize flagos devices."""

    def import_get_raw_stream_as(self, name: str) -> str:
        return f"def {name}(index):\n    return torch.flagos.current_stream(index).stream_id\n"

    def set_device(self, device_idx: int) -> str:
        return f"torch.flagos.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.flagos.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.flagos.device({device_idx})"


class Scheduling(BaseScheduling):
    """Inductor's scheduling for flagos: in lite mode it is never asked for a kernel."""

    def group_fn(self, sizes):
        raise NotImplementedError(WHY)

    def codegen_node(self, node) -> None:
        raise NotImplementedError(WHY)

    def codegen_template(self, *args, **kwargs):
        raise NotImplementedError(WHY)

    def codegen_sync(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def can_fuse_vertical(self, node1, node2) -> bool:
        return False

    def can_fuse_horizontal(self, node1, node2) -> bool:
        return False


class _DeviceIndexedAllocations:
    def make_allocation(self, name, device, dtype, shape, stride, allocation_shape=None, is_pinned=False):
        line = super().make_allocation(name, device, dtype, shape, stride, allocation_shape, is_pinned)
        if device.type == "flagos" and device.index is not None:
            line = line.replace("device='flagos'", f"device='flagos:{device.index}'")
        return line


class _SubgraphWrapperCodegen(_DeviceIndexedAllocations, SubgraphPythonWrapperCodegen):
    pass


class PythonWrapperCodegen(_DeviceIndexedAllocations, _PythonWrapperCodegen):
    """Inductor's Python wrapper, with every flagos buffer allocated on its own device."""

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return _SubgraphWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return PythonWrapperCodegen()


class CppWrapperCodegen(_PythonWrapperCodegen):
    """Inductor's C++ wrapper (cpp_wrapper=True, AOTInductor) is not supported on flagos."""

    @staticmethod
    def create(*args, **kwargs):
        raise NotImplementedError("flagos: Inductor's C++ wrapper (cpp_wrapper, AOTInductor) is not supported; "
                                  "use torch.compile(model) without cpp_wrapper")


register_device_op_overrides("flagos", FlagosDeviceOpOverrides())

__all__ = ["Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen"]
