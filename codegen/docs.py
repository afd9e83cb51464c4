"""Code shown in the docs, taken from the sources by name.

A fenced block of registry YAML or C++ in README.md or docs/*.md carries a
marker on the line above its opening fence:

    <!-- from: yaml/aclnn.yaml key=aclnnRelu -->          a top-level entry of a YAML mapping
    <!-- from: yaml/ops/*.yaml op=sqrt,add.Tensor -->     registry entries (`- op: NAME`), one file or a glob
    <!-- from: csrc/generated wrapper=add.Tensor -->      the wrapper the generator writes for an op
    <!-- add-an-op: yaml/aclnn.yaml -->                   "Adding an op": benchmarks/new_op.py appends it there
    <!-- add-an-op: new yaml/ops/special_functions.yaml --> ... or creates that file ("Adding an op of a new family")
    <!-- example: WHY -->                                 an illustration, not from the sources

`python -m codegen --check` fails on a `from:` block that differs from its
source, and on a yaml/cpp block with no marker; `python -m codegen --docs`
rewrites the `from:` blocks. Entries are found by name, so regenerating or
reordering the sources moves nothing. The README's line of op counts
(`- **N ops** with a kernel: ...`) is held to the registry the same way.
"""

from __future__ import annotations

import difflib
import glob
import os
import re
from dataclasses import dataclass

# Blocks in these languages show project code and so need a marker.
CODE_LANGS = ("yaml", "cpp", "c++", "c")
MARKER = re.compile(r"^\s*<!--\s*(from|add-an-op|example):\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)([\w+-]*)\s*$")
SELECTORS = ("key", "op", "wrapper")
GENERATED = "csrc/generated"
COUNTS = re.compile(r"^- \*\*[\d,]+ ops\*\* with a kernel: .*$", re.M)


class DocsError(Exception):
    """A marker that names no source, or a name its source lacks."""


@dataclass(frozen=True)
class Block:
    doc: str  # the doc's path, relative to the root
    line: int  # 1-based line of the opening fence
    lang: str
    kind: str  # "from", "add-an-op", "example", or "" without a marker
    marker: str  # the marker's text after its kind
    indent: str  # the fence's indentation (a block inside a list item)
    body: str  # the lines between the fences, the indentation removed
    start: int  # 0-based index of the first body line
    end: int  # 0-based index of the closing fence


def doc_files(root: str) -> list[str]:
    """The docs the check reads, relative to root: README.md and docs/*.md."""
    names = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    names += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    return names


def blocks(doc: str, text: str) -> list[Block]:
    lines = text.split("\n")
    found, index = [], 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        indent, ticks, lang = fence.groups()
        end = index + 1
        while end < len(lines) and lines[end].strip() != ticks:
            end += 1
        marker = MARKER.match(lines[index - 1]) if index > 0 else None
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                         for line in lines[index + 1:end])
        found.append(Block(doc, index + 1, lang.lower(), marker.group(1) if marker else "",
                           marker.group(2) if marker else "", indent, body, index + 1, end))
        index = end + 1
    return found


def _entry(text: str, head: re.Pattern) -> str | None:
    """The entry whose first line matches `head`: that line and the indented (or blank) lines after it."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if head.match(line):
            end = number + 1
            while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
                end += 1
            return "\n".join(lines[number:end]).rstrip("\n")
    return None


def _parse_marker(text: str) -> tuple[str, str, list[str]]:
    parts = text.split()
    if len(parts) != 2 or "=" not in parts[1]:
        raise DocsError(f"`from: {text}`: expected `from: SOURCE SELECTOR=NAME[,NAME...]`")
    selector, _, names = parts[1].partition("=")
    if selector not in SELECTORS or not names:
        raise DocsError(f"`from: {text}`: the selector is one of {', '.join(SELECTORS)}, with names")
    return parts[0], selector, names.split(",")


def excerpt(root: str, marker: str, wrappers: dict[str, str]) -> str:
    """The text a `from:` marker names. `wrappers`: op -> its generated wrapper's C++."""
    source, selector, names = _parse_marker(marker)
    if selector == "wrapper":
        if source != GENERATED:
            raise DocsError(f"`from: {marker}`: wrappers come from {GENERATED}")
        missing = [name for name in names if name not in wrappers]
        if missing:
            raise DocsError(f"`from: {marker}`: the generator writes no wrapper for {', '.join(missing)}")
        return "\n\n".join(wrappers[name] for name in names)
    if source == GENERATED:
        raise DocsError(f"`from: {marker}`: {GENERATED} is read with wrapper=OP")
    files = sorted(glob.glob(os.path.join(root, source)))
    if not files:
        raise DocsError(f"`from: {marker}`: no file matches {source}")
    texts = {}
    for path in files:
        with open(path, encoding="utf-8") as handle:
            texts[os.path.relpath(path, root)] = handle.read()
    entries = []
    for name in names:
        head = re.compile(rf"^- op: {re.escape(name)}\s*(#.*)?$" if selector == "op"
                          else rf"^{re.escape(name)}:\s*(#.*)?$")
        found = [(path, entry) for path, text in texts.items() if (entry := _entry(text, head)) is not None]
        if len(found) != 1:
            where = "no file" if not found else ", ".join(path for path, _ in found)
            raise DocsError(f"`from: {marker}`: {selector} {name} is in {where} of {source}; name exactly one")
        entries.append(found[0][1])
    return "\n\n".join(entries)


def counts_line(ops: int, generated: int, handwritten: int, bodies: int, guards: dict[str, int]) -> str:
    """The README's line of op counts, as `python -m codegen --report` counts them."""
    unguarded = guards.get("none", 0)
    return (f"- **{ops} ops** with a kernel: {generated} generated from `yaml/ops/*.yaml` and {handwritten} "
            f"handwritten (`yaml/handwritten.yaml`), {bodies} of those bodies of generated wrappers; "
            f"{guards.get('first-tensor', 0)} guard on their first tensor, {guards.get('explicit-arg', 0)} on an "
            f"explicit argument (a factory's `device`, a copy's destination), "
            f"{unguarded or 'none'} without a guard.")


def _review_counts(root: str, counts: str, refresh: bool, fix_command: str) -> tuple[list[str], list[str]]:
    path = os.path.join(root, "README.md")
    if not os.path.exists(path):
        return [], []
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    found = COUNTS.search(text)
    if found is None or found.group(0) == counts:
        return [], []
    if refresh:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text[:found.start()] + counts + text[found.end():])
        return [], ["README.md"]
    line = text.count("\n", 0, found.start()) + 1
    return [f"README.md:{line}: the op counts differ from the registry's:\n    {counts}\n    fix: {fix_command}"], []


def _problem(block: Block, what: str, fix: str) -> str:
    return f"{block.doc}:{block.line}: {what}\n    fix: {fix}"


def review(root: str, wrappers: dict[str, str], refresh: bool = False,
           fix_command: str = "python -m codegen --docs", counts: str | None = None) -> tuple[list[str], list[str]]:
    """Checks every doc's code blocks (and, given `counts`, the README's op counts); with `refresh`,
    rewrites the stale ones. Returns (problems, docs rewritten)."""
    problems, rewritten = _review_counts(root, counts, refresh, fix_command) if counts else ([], [])
    for doc in doc_files(root):
        path = os.path.join(root, doc)
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        lines, found = text.split("\n"), []
        for block in reversed(blocks(doc, text)):  # from the end: a rewrite keeps earlier indexes
            if block.kind == "" and block.lang in CODE_LANGS:
                found.append(_problem(
                    block, f"a {block.lang} block with no marker",
                    "put `<!-- from: SOURCE op=NAME -->` (see codegen/docs.py) or `<!-- example: why -->` "
                    "on the line above it"))
            if block.kind != "from":
                continue
            try:
                want = excerpt(root, block.marker, wrappers)
            except DocsError as error:
                found.append(_problem(block, str(error), "name a source and an entry that exist"))
                continue
            if want == block.body:
                continue
            if refresh:
                lines[block.start:block.end] = [(block.indent + line).rstrip() if line else line
                                                for line in want.split("\n")]
                continue
            diff = "".join(difflib.unified_diff(
                (block.body + "\n").splitlines(True), (want + "\n").splitlines(True),
                f"{doc}:{block.line}", f"from: {block.marker}"))
            found.append(_problem(block, f"the block differs from `from: {block.marker}`:\n{diff}".rstrip(),
                                     fix_command))
        problems += reversed(found)
        new_text = "\n".join(lines)
        if refresh and new_text != text:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(new_text)
            rewritten.append(doc)
    return problems, sorted(set(rewritten))
