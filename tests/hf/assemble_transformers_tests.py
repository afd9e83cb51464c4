#!/usr/bin/env python
"""Assemble a transformers test tree for run_hf_tests.py --transformers.

    python tests/hf/assemble_transformers_tests.py --sdist transformers-5.24.0.tar.gz \\
        --git-dir /work/.mirror/TonyRHouston+huggingface-transformers/repo --ref ad87182b \\
        --out ~/.cache/torch_fl/transformers-tests

No single source here holds transformers' test files of the installed
5.24.0 (docs/hf-test-suites.md). Two halves are combined:
- the 5.24.0 sdist: its top-level tests/*.py, the common mixins
  (test_modeling_common.py, test_configuration_common.py,
  test_pipeline_mixin.py, test_training_mixin.py, ...), which must match the
  installed library's internals;
- an older checkout (a git dir at --ref): what the sdist lacks, the model
  test files, tests/causal_lm_tester.py, tests/generation/, tests/utils/,
  tests/fixtures/, and the root conftest.py and utils/test_module.
tests/exporters/test_export.py (imported by the 5.24.0 mixins, newer than
the checkout) is replaced by an empty ExportTesterMixin: the export tests
are not measured.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

# Taken from the checkout; tests/models/<family> for each --models entry too.
FROM_CHECKOUT = (
    "conftest.py", "utils/test_module", "tests/__init__.py", "tests/causal_lm_tester.py",
    "tests/generation", "tests/utils", "tests/fixtures", "tests/models/__init__.py",
)

EXPORT_STANDIN = '''\
# Written by torch_fl's tests/hf/assemble_transformers_tests.py: the checkout
# predates tests/exporters, and the export tests are not measured here.
class ExportTesterMixin:
    pass
'''


def assemble(sdist: Path, git_dir: Path, ref: str, models: list[str], out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    paths = list(FROM_CHECKOUT) + [f"tests/models/{m}" for m in models]
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", ref, *paths],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    # The sdist's top-level test modules replace the checkout's.
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(sdist) as tar:
        tar.extractall(tmp, filter="data")
        (top,) = Path(tmp).iterdir()
        for f in (top / "tests").glob("*.py"):
            shutil.copy(f, out / "tests" / f.name)
    (out / "tests/exporters").mkdir()
    (out / "tests/exporters/__init__.py").write_text("")
    (out / "tests/exporters/test_export.py").write_text(EXPORT_STANDIN)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sdist", type=Path, required=True, help="transformers-<version>.tar.gz from PyPI")
    ap.add_argument("--git-dir", type=Path, required=True, help="a transformers git dir (bare clone, fetch mirror)")
    ap.add_argument("--ref", required=True, help="commit of --git-dir to take the other files from")
    ap.add_argument("--models", default="llama,gpt2,bert", help="folders of tests/models to take")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    assemble(args.sdist, args.git_dir, args.ref, args.models.split(","), args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
