"""torch.distributed on flagos: the ``hccl`` backend.

``import torch_fl`` registers it for the ``flagos`` device, so the usual
one-process-per-device recipe works unchanged::

    dist.init_process_group("hccl")            # or "cpu:gloo,flagos:hccl"
    torch.flagos.set_device(local_rank)        # optional: collectives guard anyway
    x = torch.ones(4, device=f"flagos:{local_rank}")
    dist.all_reduce(x)

Each collective runs HCCL on its tensors' device and that device's current
stream, under the same launch guard as every kernel, whichever device is
current. On the simulator, HCCL is ``libflagos_sim_hccl.so``: the processes
of one machine, over a c10d TCPStore; with ``FLAGOS_WITH_CANN`` it is CANN's
libhccl. The group's ``timeout`` becomes ``HCCL_EXEC_TIMEOUT`` (seconds)
unless that variable was set before the first group: a rank that fails or
hangs makes the others raise ``torch.distributed.DistBackendError`` within it.
See docs/distributed.md.
"""

from __future__ import annotations

import torch.distributed as dist

from torch_fl import _C

BACKEND = "hccl"

_C._init_distributed(_C)
ProcessGroupHCCL = _C.ProcessGroupHCCL


def _create_backend(store, rank: int, size: int, timeout):
    return ProcessGroupHCCL(store, rank, size, timeout)


if BACKEND not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND, _create_backend, devices=["flagos"])

__all__ = ["BACKEND", "ProcessGroupHCCL"]
