"""Compiles the backend against CANN's real headers, and the project's CANN
declarations against CANN's.

    python tests/cann/check_cann_headers.py [--root DIR] [--only FILE...] [--jobs N]

CANN's ACL runtime headers come from the torch-npu wheel on the package
registry (downloaded with `pip download --no-deps`, unpacked, never
installed or imported). nnopbase's aclnn/acl_meta.h is not in the wheel;
what the wheel has of it, op-plugin's typedefs of nnopbase's functions in
op_api_common_base.h, becomes a stand-in acl_meta.h (the four executor
functions op-plugin does not type come from the project's own declarations,
which `python -m codegen --verify-cann` compares with hicann/opbase).

Three checks, all syntax-only:
1. every backend source (csrc/ less the simulator) compiles with
   FLAGOS_WITH_CANN against those headers;
2. the project's own declarations (csrc/include/flagos/acl_subset_*.h)
   agree with CANN's: its functions are redeclared next to CANN's (a
   different parameter or return type does not compile) and every enum value
   and status code it defines that CANN's headers define is compared.
3. the project's HCCL declarations (csrc/include/flagos/hccl_subset_*.h)
   agree with the wheel's copy of CANN's hccl/hccl.h and hccl/hccl_types.h
   in the same way, and HcclRootInfo has CANN's size.
Exit 0 when all pass, 1 otherwise (the compiler's errors are printed).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from codegen.verify_cann import constants  # noqa: E402
WHEEL = "torch-npu==2.14.0"
WHEEL_MEMBERS = ("torch_npu/include/acl/",
                 "torch_npu/include/third_party/op-plugin/op_plugin/utils/op_api_common_base.h",
                 "torch_npu/include/third_party/hccl/inc/hccl/")
# Where the wheel keeps CANN's HCCL headers (hccl/hccl.h, hccl/hccl_types.h).
HCCL_INCLUDE = ("third_party", "hccl", "inc")
# nnopbase functions the backend uses that op-plugin gives no typedef for.
UNTYPED_NNOPBASE = ("aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor", "aclSetInputTensorAddr",
                    "aclSetOutputTensorAddr")
# Included first by every backend source: the heavy ATen headers, parsed once.
PRECOMPILED = ("ATen/core/Tensor.h", "ATen/native/Resize.h", "torch/library.h", "c10/core/Scalar.h")


def fetch_headers(cache: str) -> str:
    """The unpacked include folder of the torch-npu wheel (downloaded once into `cache`)."""
    include = os.path.join(cache, "torch_npu", "include")
    if os.path.isfile(os.path.join(include, "acl", "acl.h")) and \
            os.path.isfile(os.path.join(include, *HCCL_INCLUDE, "hccl", "hccl.h")):
        return include
    wheels = os.path.join(cache, "wheel")
    os.makedirs(wheels, exist_ok=True)
    if not any(name.endswith(".whl") for name in os.listdir(wheels)):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "-q", "-d", wheels, WHEEL], check=True)
    wheel = next(os.path.join(wheels, name) for name in sorted(os.listdir(wheels)) if name.endswith(".whl"))
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith(WHEEL_MEMBERS):
                archive.extract(member, cache)
    return include


def nnopbase_stand_in(include: str, root: str, out_dir: str) -> str:
    """Writes <out_dir>/aclnn/acl_meta.h from op-plugin's typedefs; returns out_dir."""
    common = os.path.join(include, "third_party", "op-plugin", "op_plugin", "utils", "op_api_common_base.h")
    with open(common, encoding="utf-8") as handle:
        text = handle.read()
    lines = ["// Made by tests/cann/check_cann_headers.py from the torch-npu wheel: nnopbase's",
             "// functions with the types op-plugin's op_api_common_base.h gives them.",
             "#pragma once", "#include <stdint.h>", "#include <acl/acl_base.h>", "typedef int32_t aclnnStatus;"]
    lines += re.findall(r"^typedef struct acl\w+ acl\w+;$", text, flags=re.M)
    lines.append('extern "C" {')
    typed = 0
    for result, name, params in re.findall(r"typedef\s+([\w\s*]+?)\s*\(\s*\*\s*_(acl\w+)\s*\)\s*\(([^;]*?)\)\s*;",
                                           text, flags=re.S):
        lines.append(f"{' '.join(result.split())} {name}({' '.join(params.split())});")
        typed += 1
    if typed < 10:
        raise SystemExit(f"{common}: found {typed} nnopbase typedefs; the wheel's layout changed")
    ours = _read(os.path.join(root, "csrc", "include", "flagos", "acl_subset_functions.h"))
    for name in UNTYPED_NNOPBASE:
        match = re.search(rf"^aclnnStatus {name}\([^;]*\);", ours, flags=re.M | re.S)
        if match is None:
            raise SystemExit(f"acl_subset_functions.h declares no {name}")
        lines.append(" ".join(match.group(0).split()))
    lines.append('}  // extern "C"')
    folder = os.path.join(out_dir, "aclnn")
    os.makedirs(folder, exist_ok=True)
    _write(os.path.join(folder, "acl_meta.h"), "\n".join(lines) + "\n")
    return out_dir


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    if os.path.exists(path) and _read(path) == text:
        return  # keep the mtime, so a precompiled header stays valid
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def backend_sources(root: str) -> list[str]:
    csrc = os.path.join(root, "csrc")
    sources = []
    for folder in ("runtime", "aten", "handwritten", "generated", "python", "distributed"):
        for name in sorted(os.listdir(os.path.join(csrc, folder)) if os.path.isdir(os.path.join(csrc, folder)) else []):
            if name.endswith((".cc", ".cpp")):
                sources.append(os.path.join(csrc, folder, name))
    return sources


def compile_flags(root: str, include: str, stand_in: str) -> list[str]:
    import torch.utils.cpp_extension

    flags = ["-std=gnu++20", "-fsyntax-only", "-Wno-deprecated-declarations", "-DFLAGOS_WITH_CANN",
             '-DFLAGOS_DEFAULT_OPAPI_LIB="libopapi.so"',
             f"-I{os.path.join(root, 'csrc')}", f"-I{os.path.join(root, 'csrc', 'include')}",
             f"-I{include}", f"-I{os.path.join(include, *HCCL_INCLUDE)}", f"-I{stand_in}", f"-I{sysconfig.get_paths()['include']}"]
    flags += [f"-isystem{path}" for path in torch.utils.cpp_extension.include_paths()]
    return flags


def precompile(flags: list[str], cache: str) -> list[str]:
    """The flags that include the precompiled ATen headers (built once per set of flags; the
    project's own include folders do not matter to it)."""
    folder = os.path.join(cache, "precompiled")
    os.makedirs(folder, exist_ok=True)
    header = os.path.join(folder, "precompiled.h")
    _write(header, "".join(f"#include <{name}>\n" for name in PRECOMPILED))
    gch = header + ".gch"
    stamp = gch + ".flags"
    key = " ".join(f for f in flags if not f.startswith("-I"))
    if not (os.path.exists(gch) and os.path.exists(stamp) and _read(stamp) == key):
        pch_flags = [f for f in flags if f != "-fsyntax-only"]
        subprocess.run(["g++", *pch_flags, "-x", "c++-header", header, "-o", gch], check=True)
        _write(stamp, key)
    return ["-include", header]


def _compile(args: tuple[list[str], str]) -> tuple[str, int, str]:
    command, shown = args
    result = subprocess.run(command, capture_output=True, text=True)
    return shown, result.returncode, result.stderr


def _cann_constant_names(include: str) -> set[str]:
    """The integer constants (enumerators, static consts, macros) CANN's ACL headers define."""
    names: set[str] = set()
    for folder, _, files in os.walk(os.path.join(include, "acl")):
        for name in files:
            if name.endswith(".h"):
                names |= set(constants(_read(os.path.join(folder, name))))
    return names


def check_declarations(root: str, include: str, flags: list[str], out_dir: str) -> tuple[int, str, int, list[str]]:
    """Check 2: (exit status, compiler output, constants compared, constants CANN's headers lack)."""
    ours = constants(_read(os.path.join(root, "csrc", "include", "flagos", "acl_subset_types.h")))
    cann = _cann_constant_names(include)
    compare = [name for name in ours if name in cann]
    # Some of CANN's constants are macros: keep their values, then undefine
    # them so that the project's declarations of the same names parse.
    unit = ["// Made by tests/cann/check_cann_headers.py.",
            "#include <stdbool.h>", "#include <stddef.h>", "#include <stdint.h>",
            "#include <acl/acl.h>", "#include <aclnn/acl_meta.h>",
            "// The project's functions, redeclared: a different type does not compile.",
            '#include "flagos/acl_subset_functions.h"']
    for name in compare:
        unit += [f"#ifdef {name}", f"constexpr long long cann_{name} = {name};", f"#undef {name}",
                 "#else", f"constexpr long long cann_{name} = ::{name};", "#endif"]
    unit += ["namespace flagos_subset {", '#include "flagos/acl_subset_types.h"', "}  // namespace flagos_subset"]
    for name in compare:
        unit.append(f"static_assert(static_cast<long long>(flagos_subset::{name}) == cann_{name}, "
                    f"\"{name} differs from CANN's\");")
    compared = len(compare)
    path = os.path.join(out_dir, "declarations_match_cann.cc")
    _write(path, "\n".join(unit) + "\n")
    command = ["g++", *[f for f in flags if not f.startswith("-DFLAGOS_WITH_CANN")], path]
    result = subprocess.run(command, capture_output=True, text=True)
    return result.returncode, result.stderr, compared, sorted(set(ours) - cann)


def check_hccl_declarations(root: str, include: str, flags: list[str], out_dir: str) -> tuple[int, str, int]:
    """Check 3: the project's HCCL declarations (hccl_subset_*.h) against the wheel's hccl/hccl.h and
    hccl/hccl_types.h: (exit status, compiler output, constants compared)."""
    ours = constants(_read(os.path.join(root, "csrc", "include", "flagos", "hccl_subset_types.h")))
    cann = set(constants(_read(os.path.join(include, *HCCL_INCLUDE, "hccl", "hccl_types.h"))))
    # CANN's HCCL_ROOT_INFO_BYTES is a plain `const uint32_t`, which constants() does not read: the
    # unit compares it by name.
    missing = sorted(set(ours) - cann - {"HCCL_ROOT_INFO_BYTES"})
    unit = ["// Made by tests/cann/check_cann_headers.py.", "#include <stdint.h>", "#include <hccl/hccl.h>",
            "// The project's functions, redeclared: a different type does not compile.",
            '#include "flagos/hccl_subset_functions.h"',
            "namespace flagos_subset {", '#include "flagos/hccl_subset_types.h"', "}  // namespace flagos_subset",
            "static_assert(sizeof(flagos_subset::HcclRootInfo) == sizeof(::HcclRootInfo), "
            "\"HcclRootInfo's size differs from CANN's\");",
            "static_assert(flagos_subset::HCCL_ROOT_INFO_BYTES == ::HCCL_ROOT_INFO_BYTES, "
            "\"HCCL_ROOT_INFO_BYTES differs from CANN's\");"]
    for name in ours:
        if name in cann and name != "HCCL_ROOT_INFO_BYTES":
            unit.append(f"static_assert(static_cast<long long>(flagos_subset::{name}) == "
                        f"static_cast<long long>(::{name}), \"{name} differs from CANN's\");")
    path = os.path.join(out_dir, "hccl_declarations_match_cann.cc")
    _write(path, "\n".join(unit) + "\n")
    command = ["g++", *[f for f in flags if not f.startswith("-DFLAGOS_WITH_CANN")], path]
    result = subprocess.run(command, capture_output=True, text=True)
    errors = result.stderr + "".join(f"{name}: CANN's hccl_types.h does not define it\n" for name in missing)
    return (result.returncode or len(missing)), errors, len(ours) - len(missing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=ROOT, help="the project (default: this checkout)")
    parser.add_argument("--cache", default=None, help="where the wheel and build files go (default ROOT/build/cann)")
    parser.add_argument("--only", nargs="*", default=None, help="compile only these backend sources")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    cache = os.path.abspath(args.cache or os.path.join(ROOT, "build", "cann"))
    out_dir = os.path.join(cache, "check", hashlib.sha1(root.encode()).hexdigest()[:12])
    os.makedirs(out_dir, exist_ok=True)

    include = fetch_headers(cache)
    stand_in = nnopbase_stand_in(include, root, out_dir)
    flags = compile_flags(root, include, stand_in)

    status, errors, compared, absent = check_declarations(root, include, flags, out_dir)
    if status != 0:
        print(errors)
    print(f"declarations: {'match CANN' if status == 0 else 'DIFFER FROM CANN (errors above)'}: the functions of "
          f"acl_subset_functions.h redeclared next to CANN's, {compared} enum values and status codes compared"
          f"{'; not in the wheel, so compared by --verify-cann only: ' + ', '.join(absent) if absent else ''}")

    hccl_status, hccl_errors, hccl_compared = check_hccl_declarations(root, include, flags, out_dir)
    if hccl_status != 0:
        print(hccl_errors)
    print(f"HCCL declarations: {'match CANN' if hccl_status == 0 else 'DIFFER FROM CANN (errors above)'}: the "
          f"functions of hccl_subset_functions.h redeclared next to CANN's hccl.h, {hccl_compared} enum values "
          f"and the root info's size compared")
    status = status or hccl_status

    sources = [os.path.abspath(s) for s in args.only] if args.only is not None else backend_sources(root)
    broken = []
    if sources:
        pch = precompile(flags, cache)
        jobs = [(["g++", *flags, *pch, source], os.path.relpath(source, root)) for source in sources]
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for shown, code, stderr in pool.map(_compile, jobs):
                if code != 0:
                    broken.append(shown)
                    print(f"{shown}: does not compile against CANN's headers\n{stderr}")
    print(f"backend sources: {len(sources) - len(broken)} of {len(sources)} compile against CANN's headers")
    return 1 if status != 0 or broken else 0


if __name__ == "__main__":
    sys.exit(main())
