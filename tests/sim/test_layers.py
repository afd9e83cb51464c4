"""The native code's layers: a file includes only its own layer and those below.

    include -> sim -> runtime -> aten -> kernels (handwritten, generated, distributed) -> python

csrc/include holds the CANN declarations and the ACLNN prototypes, so the
simulator (csrc/sim, and its tests in tests/sim) builds without the backend;
the runtime knows nothing of the kernels; aten/ (ATen-level glue) is below
the kernels that use it. Each quoted or angled include is resolved as the
compiler would (next to the file, then the include folders of the build) and
its target's layer compared with the including file's.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

LAYERS = {"include": 0, "sim": 1, "runtime": 2, "aten": 3, "handwritten": 4, "generated": 4, "distributed": 4,
          "python": 5}
# The include folders of the builds (csrc/CMakeLists.txt, csrc/sim/CMakeLists.txt), in search order.
SEARCH = ("csrc", "csrc/include", "csrc/sim/include", "csrc/sim/internal")
# Includes from a lower layer that stay, each with why.
ALLOWED = {
    # The declarations of the argument checks aten/op_checks.cc defines, generated from the registry with
    # the wrappers that call them.
    ("aten/op_checks.cc", "generated/op_checks.h"),
    # The declarations of the csrc/aten bodies that yaml/aten.yaml and yaml/composite.yaml register.
    *((f"aten/{name}.cc", "generated/aten_kernels.h")
      for name in ("autocast", "composite_guard", "sdpa_choice", "tensor_basics", "views")),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of(path: Path, root: Path) -> tuple[str, int] | None:
    """(path under csrc/ or tests/sim/, layer) of a file of the native code; None outside it."""
    relative = path.relative_to(root).as_posix()
    if relative.startswith("tests/sim/"):
        return relative, LAYERS["sim"]  # the simulator's own tests build with it, alone
    if not relative.startswith("csrc/"):
        return None
    under = relative[len("csrc/"):]
    top = under.split("/")[0]
    return (under, LAYERS[top]) if top in LAYERS else None


def resolve(include: str, source: Path, root: Path) -> Path | None:
    for folder in (source.parent, *(root / f for f in SEARCH)):
        candidate = (folder / include).resolve()
        if candidate.is_file() and candidate.is_relative_to(root):
            return candidate
    return None  # a system, torch or CANN header


def upward_includes(root: Path) -> list[str]:
    """Every include of a higher layer's file, as "file -> included (layer a includes layer b)"."""
    root = root.resolve()
    sources = [p for top in ("csrc", "tests/sim") for p in sorted((root / top).rglob("*"))
               if p.suffix in (".h", ".cc", ".cpp")]
    problems = []
    for source in sources:
        own = layer_of(source, root)
        if own is None:
            continue
        for include in INCLUDE.findall(source.read_text(encoding="utf-8", errors="replace")):
            target = resolve(include, source, root)
            theirs = layer_of(target, root) if target is not None else None
            if theirs is None or theirs[1] <= own[1] or (own[0], theirs[0]) in ALLOWED:
                continue
            problems.append(f"{own[0]} -> {theirs[0]} (layer {own[1]} includes layer {theirs[1]})")
    return problems


def test_no_include_from_a_lower_layer_to_a_higher_one():
    assert upward_includes(REPO) == []


def test_the_scan_sees_the_includes_that_matter():
    """The scan finds the includes it judges: the kernels include the runtime, the simulator's operators
    their prototypes in csrc/include; a scan that resolved nothing would pass on anything."""
    seen = set()
    for source in (REPO / "csrc" / "sim" / "opapi" / "ops_add.cc", REPO / "csrc" / "handwritten" / "copy.cc"):
        for include in INCLUDE.findall(source.read_text(encoding="utf-8")):
            target = resolve(include, source, REPO)
            if target is not None:
                seen.add(layer_of(target, REPO)[0])
    assert {"include/flagos/aclnn/aclnnAdd.h", "sim/opapi/sim_op.h", "runtime/launch.h"} <= seen


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_negative_control_upward_includes_are_reported(tmp_path):
    root = _tree(tmp_path, {
        "csrc/include/flagos/acl_api.h": "#pragma once\n",
        "csrc/generated/op_checks.h": "#pragma once\n",
        "csrc/runtime/launch.h": '#include "flagos/acl_api.h"\n#include "generated/op_checks.h"\n',
        "csrc/handwritten/support.h": "#pragma once\n",
        "csrc/aten/choice.cc": '#include "handwritten/support.h"\n#include "runtime/launch.h"\n',
        "csrc/sim/runtime/runtime.h": "#pragma once\n",
        "csrc/sim/runtime/memory.cc": '#include "runtime.h"\n#include <runtime/launch.h>\n',
        "tests/sim/sim_memory.cc": '#include "flagos/acl_api.h"\n#include "generated/op_checks.h"\n',
    })
    assert sorted(upward_includes(root)) == sorted([
        "runtime/launch.h -> generated/op_checks.h (layer 2 includes layer 4)",
        "aten/choice.cc -> handwritten/support.h (layer 3 includes layer 4)",
        # "runtime.h" next to the file is the simulator's own; <runtime/launch.h> is the backend's
        "sim/runtime/memory.cc -> runtime/launch.h (layer 1 includes layer 2)",
        "tests/sim/sim_memory.cc -> generated/op_checks.h (layer 1 includes layer 4)",
    ])
