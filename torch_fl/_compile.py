"""torch.compile on flagos, with any mode.

Inductor cannot generate kernels for Ascend NPUs, but it has a mode that
needs none: "lite" (torch._inductor.list_mode_options("lite")) lowers every
op to an ATen call, keeps ops whole instead of decomposing them, and skips
the fusion passes. On flagos every ATen call is a flagos kernel, so a flagos
graph compiles to a wrapper that launches the same kernels as eager mode,
minus Python and dispatch overhead. The options must be chosen before AOT
autograd decomposes the graph, that is, before Inductor learns which devices
a graph uses; only torch.compile's Inductor backend object sees both the
mode and the graph first, so torch_fl puts a subclass of it in its place
(torch.compile looks it up as torch._TorchCompileInductorWrapper on each
call). For a graph that uses flagos, the subclass adds the lite options
under the user's own, and turns off what the mode asks for that flagos
cannot do, with a one-time warning:

- default, "lite": every op a flagos kernel.
- "reduce-overhead": as default; CUDA graphs are off (flagos has no graph
  capture).
- "max-autotune", "max-autotune-no-cudagraphs": as default; there is nothing
  to autotune, and CUDA graphs are off.

Other graphs (CPU, CUDA) compile exactly as without torch_fl. An option that
asks Inductor to generate kernels on flagos (fallback_by_default=False, which
drops the lite options, or a region marked for Inductor compilation) reaches
torch_fl/_inductor.py's Scheduling, which raises an error that says so.
"""

from __future__ import annotations

import warnings

import torch
from torch.utils import _pytree as pytree

# What Inductor's modes turn on that flagos cannot do, and why.
_NO_CUDA_GRAPHS = ("flagos has no graph capture, so there are no CUDA graphs: the compiled graph launches "
                   "its kernels one by one")
_NOTHING_TO_TUNE = ("Inductor generates no flagos kernels, so there is nothing to autotune: every op of a "
                    "flagos graph is a flagos kernel")
UNSUPPORTED_OPTIONS = {
    "triton.cudagraphs": _NO_CUDA_GRAPHS,
    "max_autotune": _NOTHING_TO_TUNE,
    "max_autotune_gemm": _NOTHING_TO_TUNE,
    "max_autotune_pointwise": _NOTHING_TO_TUNE,
    "coordinate_descent_tuning": _NOTHING_TO_TUNE,
}

_warned: set[str] = set()


def uses_flagos(graph: torch.fx.GraphModule, example_inputs) -> bool:
    """Whether a graph Dynamo captured reads or makes a flagos tensor."""
    values = [*example_inputs, *(node.meta.get("example_value") for node in graph.graph.nodes)]
    return any(isinstance(value, torch.Tensor) and value.device.type == "flagos"
               for value in pytree.tree_leaves(values))


def flagos_options(options: dict) -> dict:
    """Inductor's options for a flagos graph: lite mode under the user's `options`, without
    those flagos cannot honour (a warning says so, once for each)."""
    from torch._inductor import list_mode_options

    dropped = {key for key, value in options.items() if key in UNSUPPORTED_OPTIONS and value}
    for key in sorted(dropped - _warned):
        _warned.add(key)
        warnings.warn(f"torch.compile on flagos ignores {key}=True: {UNSUPPORTED_OPTIONS[key]}. The graph "
                      "runs as with the default mode (docs/torch-cuda-api.md, torch.compile)", stacklevel=3)
    # fallback_by_default=False asks for generated kernels: no lite options
    # under it (their selective decomposition assumes fallbacks).
    lite = list_mode_options("lite") if options.get("fallback_by_default", True) else {}
    return {**lite, **options, **dict.fromkeys(dropped, False)}


class InductorBackend(torch._TorchCompileInductorWrapper):
    """torch.compile's Inductor backend, which compiles a graph that uses flagos with
    flagos_options (all-ATen) and any other graph as Inductor does."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # torch.compile has imported Dynamo by now: registering the device
        # interface here costs nothing and precedes any tracing.
        from torch_fl import _device_interface  # noqa: F401

    def __call__(self, model_, inputs_, *, config_patches=None):
        if uses_flagos(model_, inputs_):
            config_patches = flagos_options({**self.config, **(config_patches or {})})
        return super().__call__(model_, inputs_, config_patches=config_patches)


torch._TorchCompileInductorWrapper = InductorBackend
