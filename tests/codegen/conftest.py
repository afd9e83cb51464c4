"""Helpers for the generator tests: a throwaway copy of the registry, and runs of `python -m codegen`.

Tests never touch the repository's own yaml/ or csrc/: they copy them into
tmp_path and point the generator there with --root.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from codegen.main import main  # noqa: E402


@dataclass
class Run:
    code: int
    out: str
    err: str


class Workspace:
    """A temp root with yaml/, csrc/generated/ and csrc/handwritten/ copied from the repo."""

    def __init__(self, root: str, capsys):
        self.root = root
        self._capsys = capsys
        shutil.copytree(os.path.join(REPO, "yaml"), self.path("yaml"))
        shutil.copytree(os.path.join(REPO, "csrc", "handwritten"), self.path("csrc", "handwritten"))
        os.makedirs(self.path("csrc", "generated"))

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    @property
    def out_dir(self) -> str:
        return self.path("csrc", "generated")

    def run(self, *args: str) -> Run:
        self._capsys.readouterr()
        code = main(["--root", self.root, *args])
        captured = self._capsys.readouterr()
        return Run(code, captured.out, captured.err)

    def read(self, *parts: str) -> str:
        with open(self.path(*parts), encoding="utf-8") as handle:
            return handle.read()

    def write(self, relative: str, text: str) -> None:
        path = self.path(*relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)

    def edit(self, relative: str, old: str, new: str) -> None:
        text = self.read(*relative.split("/"))
        assert old in text, f"{old!r} not in {relative}"
        self.write(relative, text.replace(old, new, 1))

    def line_of(self, relative: str, needle: str) -> int:
        for number, line in enumerate(self.read(*relative.split("/")).splitlines(), 1):
            if needle in line:
                return number
        raise AssertionError(f"{needle!r} not in {relative}")

    @property
    def header_dir(self) -> str:
        return self.path("csrc", "include", "flagos", "aclnn")

    def output_path(self, name: str) -> str:
        """The file of an outputs() name."""
        if name.startswith("flagos/aclnn/"):
            return self.path("csrc", "include", *name.split("/"))
        return os.path.join(self.out_dir, *name.split("/"))

    def outputs(self) -> dict[str, bytes]:
        """Every generated file: csrc/generated's by their path relative to it ("kernels_0.cpp"), the
        ACLNN prototypes as code includes them ("flagos/aclnn/aclnnAdd.h")."""
        files = {}
        for base, prefix in ((self.out_dir, ""), (self.header_dir, "flagos/aclnn/")):
            for folder, _, names in os.walk(base):
                for name in names:
                    path = os.path.join(folder, name)
                    with open(path, "rb") as handle:
                        files[prefix + os.path.relpath(path, base).replace(os.sep, "/")] = handle.read()
        return dict(sorted(files.items()))


@pytest.fixture
def ws(tmp_path, capsys) -> Workspace:
    return Workspace(str(tmp_path), capsys)


@pytest.fixture(autouse=True)
def _clean_flagos_state():
    """The generator tests never load the backend: this overrides tests/conftest.py's
    per-test reset of the simulated devices, so they run without a built backend."""
    yield
