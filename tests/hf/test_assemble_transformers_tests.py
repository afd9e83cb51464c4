"""assemble_transformers_tests.py on a two-commit git repo and a small sdist:
the sdist's top-level test modules win, the rest comes from the named commit
(not the newer one), and tests/exporters gets the empty mixin."""

from __future__ import annotations

import importlib.util
import subprocess
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("assemble", HERE / "assemble_transformers_tests.py")
assemble = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(assemble)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_assemble(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _write(repo, {p: "old\n" for p in (
        "conftest.py", "utils/test_module/__init__.py", "tests/__init__.py", "tests/causal_lm_tester.py",
        "tests/generation/test_utils.py", "tests/utils/__init__.py", "tests/fixtures/a.txt",
        "tests/models/__init__.py", "tests/models/llama/test_modeling_llama.py",
        "tests/models/t5/test_modeling_t5.py", "tests/test_modeling_common.py")})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    ref = _git(repo, "rev-parse", "HEAD")
    _write(repo, {"tests/causal_lm_tester.py": "newer\n"})
    _git(repo, "commit", "-qam", "two")

    sdist_root = tmp_path / "transformers-9.9.9"
    _write(sdist_root, {"tests/test_modeling_common.py": "sdist\n", "tests/test_pipeline_mixin.py": "sdist\n"})
    sdist = tmp_path / "transformers-9.9.9.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(sdist_root, arcname=sdist_root.name)

    out = tmp_path / "out"
    assemble.main(["--sdist", str(sdist), "--git-dir", str(repo / ".git"), "--ref", ref,
                   "--models", "llama", "--out", str(out)])
    assert (out / "tests/test_modeling_common.py").read_text() == "sdist\n"
    assert (out / "tests/test_pipeline_mixin.py").read_text() == "sdist\n"
    assert (out / "tests/causal_lm_tester.py").read_text() == "old\n"
    assert (out / "tests/models/llama/test_modeling_llama.py").exists()
    assert not (out / "tests/models/t5").exists()
    assert (out / "utils/test_module/__init__.py").exists()
    assert "class ExportTesterMixin" in (out / "tests/exporters/test_export.py").read_text()
