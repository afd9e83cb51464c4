"""The backend's handwritten, runtime, aten and distributed sources compile
in unity batches (csrc/CMakeLists.txt: several .cc files in one unit), so a
name defined at file scope in two of them (each in its own anonymous
namespace) clashes when both land in one batch: a redefinition error, or,
with other parameter types, a silent overload that can change which function
a call picks. Which files share a batch moves as files are added, so no such
name may repeat across these files at all."""

from __future__ import annotations

import collections
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The folders whose sources CMake batches (csrc/CMakeLists.txt; generated/ is not batched).
UNITY_FOLDERS = ("runtime", "aten", "handwritten", "distributed")

# A function or variable defined at the start of a line: "<type> name(" or "<type> name =".
DEFINITION = re.compile(r"^(?!return\b|using\b|namespace\b|typedef\b|case\b|else\b)"
                        r"[A-Za-z_][\w:<>,*& ]*?[\s*&]([A-Za-z_]\w*)\s*(\(|=\s*\[|=)")


def file_scope_names(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        if line.startswith((" ", "\t", "#", "//", "}")) or line.rstrip().endswith(";") and "(" in line and "=" not in line:
            continue  # indented, preprocessor, comment, or a declaration
        match = DEFINITION.match(line)
        if match:
            names.add(match.group(1))
    return names


def unity_sources() -> list[str]:
    sources = []
    for folder in UNITY_FOLDERS:
        path = os.path.join(REPO, "csrc", folder)
        sources += [os.path.join(path, name) for name in sorted(os.listdir(path)) if name.endswith(".cc")]
    return sources


def repeated_names(sources: dict[str, str]) -> dict[str, list[str]]:
    where = collections.defaultdict(list)
    for path, text in sources.items():
        for name in file_scope_names(text):
            where[name].append(path)
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_file_scope_name_repeats_across_batched_sources():
    sources = {os.path.relpath(path, REPO): open(path, encoding="utf-8").read() for path in unity_sources()}
    assert len(sources) > 30
    assert repeated_names(sources) == {}


def test_the_scan_finds_a_repeat():
    # Negative control: the clashes the unity build met, a helper and a registration flag.
    helper = "namespace {\nstd::vector<int64_t> ints(c10::SymIntArrayRef values) { return {}; }\n}\n"
    flag = "namespace {\nconst bool registered = [] {\n  return true;\n}();\n}\n"
    assert repeated_names({"a.cc": helper, "b.cc": helper}) == {"ints": ["a.cc", "b.cc"]}
    assert repeated_names({"a.cc": flag, "b.cc": flag}) == {"registered": ["a.cc", "b.cc"]}
    # Overloads within one file and declarations are not repeats.
    one = "void check(int x) {}\nvoid check(double x) {}\nvoid later(int x);\n"
    assert repeated_names({"a.cc": one, "b.cc": "void later(int x) {}\n"}) == {}
