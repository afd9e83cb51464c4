"""The backend's handwritten, runtime, aten and distributed sources compile
in unity batches (csrc/CMakeLists.txt: several .cc files in one unit), and so
do the simulator's operator files (csrc/sim/CMakeLists.txt), so a name
defined at file scope in two files of one library (each in its own anonymous
namespace) clashes when both land in one batch: a redefinition error, or,
with other parameter types, a silent overload that can change which function
a call picks. Which files share a batch moves as files are added, so no such
name may repeat across the files of one library at all: functions,
variables, constants, types and macros."""

from __future__ import annotations

import collections
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The folders whose sources CMake batches, per library: the backend (csrc/CMakeLists.txt;
# generated/ is not batched) and the simulator's operator library (csrc/sim/CMakeLists.txt).
UNITY_FOLDERS = {
    "flagos_backend": ("runtime", "aten", "handwritten", "distributed"),
    "flagos_sim_opapi": ("sim/opapi",),
}

# A function or variable defined at the start of a line: "<type> name(" or "<type> name =".
DEFINITION = re.compile(r"^(?!return\b|using\b|namespace\b|typedef\b|case\b|else\b)"
                        r"[A-Za-z_][\w:<>,*& ]*?[\s*&]([A-Za-z_]\w*)\s*(\(|=\s*\[|=)")
# A constant with a braced initializer ("constexpr DTypes kIndexTypes{...}"), a type, an alias, a macro.
OTHER_DEFINITION = re.compile(r"^(?:(?:inline\s+|static\s+)*constexpr\s+[\w:<>, ]+?\s([A-Za-z_]\w*)\s*\{"
                              r"|(?:struct|class|enum(?:\s+class)?|union)\s+([A-Za-z_]\w*)\s*(?:\{|:|final\b)"
                              r"|using\s+([A-Za-z_]\w*)\s*="
                              r"|#\s*define\s+([A-Za-z_]\w*))")


def file_scope_names(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        if line.startswith((" ", "\t", "#", "//", "}")) or line.rstrip().endswith(";") and "(" in line and "=" not in line:
            continue  # indented, preprocessor, comment, or a declaration
        match = DEFINITION.match(line)
        if match:
            names.add(match.group(1))
    for line in text.splitlines():
        match = OTHER_DEFINITION.match(line)
        if match:
            names.add(next(group for group in match.groups() if group))
    return names


def unity_sources(library: str) -> list[str]:
    sources = []
    for folder in UNITY_FOLDERS[library]:
        path = os.path.join(REPO, "csrc", folder)
        sources += [os.path.join(path, name) for name in sorted(os.listdir(path)) if name.endswith(".cc")]
    return sources


def repeated_names(sources: dict[str, str]) -> dict[str, list[str]]:
    where = collections.defaultdict(list)
    for path, text in sources.items():
        for name in file_scope_names(text):
            where[name].append(path)
    return {name: paths for name, paths in where.items() if len(paths) > 1}


@pytest.mark.parametrize("library", sorted(UNITY_FOLDERS))
def test_no_file_scope_name_repeats_across_batched_sources(library):
    sources = {os.path.relpath(path, REPO): open(path, encoding="utf-8").read() for path in unity_sources(library)}
    assert len(sources) > 30
    assert repeated_names(sources) == {}


def test_the_batched_folders_are_the_ones_cmake_batches():
    # Negative control for the folder lists: both libraries are unity builds.
    for cmake in ("csrc/CMakeLists.txt", "csrc/sim/CMakeLists.txt"):
        assert "UNITY_BUILD ON" in open(os.path.join(REPO, cmake), encoding="utf-8").read(), cmake


def test_the_scan_finds_a_repeat():
    # Negative control: the clashes the unity build met, a helper and a registration flag.
    helper = "namespace {\nstd::vector<int64_t> ints(c10::SymIntArrayRef values) { return {}; }\n}\n"
    flag = "namespace {\nconst bool registered = [] {\n  return true;\n}();\n}\n"
    assert repeated_names({"a.cc": helper, "b.cc": helper}) == {"ints": ["a.cc", "b.cc"]}
    assert repeated_names({"a.cc": flag, "b.cc": flag}) == {"registered": ["a.cc", "b.cc"]}
    # Constants with a braced initializer, types, aliases and macros repeat too.
    constant = "namespace {\nconstexpr DTypes kIndexTypes{ACL_INT32, ACL_INT64};\n}\n"
    assert repeated_names({"a.cc": constant, "b.cc": constant}) == {"kIndexTypes": ["a.cc", "b.cc"]}
    for text, name in (("struct Plan {\n  int x;\n};\n", "Plan"), ("class Shapes final {\n};\n", "Shapes"),
                       ("enum class Mode : int { kA };\n", "Mode"), ("using Views = int;\n", "Views"),
                       ("#define FSIM_UNARY(api) api\n", "FSIM_UNARY")):
        assert repeated_names({"a.cc": text, "b.cc": text}) == {name: ["a.cc", "b.cc"]}, text
    # Overloads within one file and declarations are not repeats.
    one = "void check(int x) {}\nvoid check(double x) {}\nvoid later(int x);\n"
    assert repeated_names({"a.cc": one, "b.cc": "void later(int x) {}\n"}) == {}
