"""A fast, deterministic slice of PyTorch's own device-generic tests, on the
CPU and on flagos (through PrivateUse1TestBase), so that a regression shows
in the project's test run. The full run (four files, about an hour on two
cores) is `python tests/pytorch/run_device_generic.py`; docs/pytorch-tests.md
has its numbers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("run_device_generic", HERE / "run_device_generic.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

# PyTorch's test files are not part of the project: the folder comes from
# $FLAGOS_PYTORCH_TESTS (docs/pytorch-tests.md says how to get them).
FOLDER = runner.default_folder()

# test_shape_ops.py in full, and the conjugate / complex cases of
# test_view_ops.py (they once killed the process).
SUBSET = [("test_shape_ops.py", None), ("test_view_ops.py", "conj or complex")]

# CPU-passing tests known to fail on flagos, with their cause
# (docs/pytorch-tests.md groups all of them). A new failure fails the test.
KNOWN = {
    "test_shape_ops.py::TestShapeOps::test_flip_DEV_float32":
        "quantized tensors: flagos has no quantized backend",
}


@pytest.mark.parametrize("name,select", SUBSET, ids=[n for n, _ in SUBSET])
def test_pytorch_tests_that_pass_on_the_cpu_pass_on_flagos(name, select, tmp_path):
    if FOLDER is None:
        pytest.skip(f"PyTorch's test files are not here: set {runner.ENV_FOLDER} to PyTorch's test/ folder "
                    "at the installed torch's tag (docs/pytorch-tests.md)")
    if not (FOLDER / name).is_file():
        pytest.skip(f"{name} is not in ${runner.ENV_FOLDER} ({FOLDER}); docs/pytorch-tests.md says how to get it")
    summary = runner.run(FOLDER, [name], ["cpu", "flagos"], tmp_path, select=select,
                         stall=300)
    row = summary["files"][name]
    assert row["cpu_passed"] > 10, summary  # the comparison means something
    assert summary["crashes"] == [], summary["crashes"]
    # @onlyCPU tests are skipped on every other device (CUDA too): not applicable.
    new = {gid: cause for gid, cause in summary["failing"].items()
           if gid not in KNOWN and "Only runs on cpu" not in cause}
    assert not new, new
