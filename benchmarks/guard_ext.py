"""Builds and loads the C++ helpers with torch.utils.cpp_extension.load,
into build/benchmarks_ext/:

- cpp/device_guard_bench.cpp: loops and calls with an unconditional
  c10::DeviceGuard (upstream's first design); torch headers only.
- cpp/launch_guard_bench.cpp: the project's flagos::LaunchGuard alone;
  built against csrc/ and libflagos_backend.so, so it is loaded separately:
  a change of the project's internal headers cannot take the first one down.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD_DIR = os.path.join(REPO, "build", "benchmarks_ext")
CSRC = os.path.join(REPO, "csrc")
LIB_DIR = os.path.join(REPO, "torch_fl", "lib")


@dataclass(frozen=True)
class Helper:
    name: str
    source: str
    include_dirs: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()

    @property
    def library(self) -> str:
        return os.path.join(BUILD_DIR, self.name, f"{self.name}.so")

    def is_built(self) -> bool:
        """Built, and newer than its source."""
        return os.path.exists(self.library) and os.path.getmtime(self.library) >= os.path.getmtime(self.source)


DEVICE_GUARD = Helper("flagos_device_guard_bench", os.path.join(HERE, "cpp", "device_guard_bench.cpp"))
LAUNCH_GUARD = Helper(
    "flagos_launch_guard_bench",
    os.path.join(HERE, "cpp", "launch_guard_bench.cpp"),
    include_dirs=(CSRC, os.path.join(CSRC, "include"), os.path.join(CSRC, "sim", "include")),
    ldflags=(f"-L{LIB_DIR}", "-lflagos_backend", f"-Wl,-rpath,{LIB_DIR}"),
)


def load(helper: Helper, build: bool) -> tuple[Optional[ModuleType], str]:
    """The helper module and how it was obtained, or None and why not.

    With build=False (--quick) an unbuilt helper is skipped rather than
    compiled: its compile takes longer than the whole quick run.
    """
    if not build and not helper.is_built():
        return None, "skipped: not built yet and --quick does not compile it (run without --quick once)"
    from torch.utils import cpp_extension

    was_built = helper.is_built()
    os.makedirs(os.path.dirname(helper.library), exist_ok=True)
    try:
        module = cpp_extension.load(
            name=helper.name,
            sources=[helper.source],
            extra_cflags=["-std=c++20", "-O2"],
            extra_include_paths=list(helper.include_dirs),
            extra_ldflags=list(helper.ldflags),
            build_directory=os.path.dirname(helper.library),
            verbose=False,
        )
    except Exception as error:  # a missing compiler must not stop the other figures
        return None, f"unavailable: {helper.name} failed to build: {str(error)[-500:]}"
    return module, "loaded (already built)" if was_built else "built now"
