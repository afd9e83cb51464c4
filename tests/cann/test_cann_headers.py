"""The backend and the project's CANN declarations against CANN's real headers
(tests/cann/check_cann_headers.py; CI runs it over every backend source).
Each planted mismatch must fail the check."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHECK = os.path.join(HERE, "check_cann_headers.py")


def run_check(root: str, *only: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, CHECK, "--root", root, "--cache", os.path.join(ROOT, "build", "cann"),
                           "--only", *only], capture_output=True, text=True, timeout=600)


@pytest.fixture
def copy(tmp_path):
    """A copy of the project's csrc/ to plant mismatches in."""
    shutil.copytree(os.path.join(ROOT, "csrc"), tmp_path / "csrc",
                    ignore=shutil.ignore_patterns("sim", "generated"))
    return tmp_path


def edit(path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_declarations_match_cann():
    run = run_check(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "declarations: match CANN" in run.stdout


def test_a_parameter_type_that_differs_fails(copy):
    edit(copy / "csrc/include/flagos/acl_subset_functions.h",
         "aclError aclrtMemcpy(void* dst, size_t destMax,", "aclError aclrtMemcpy(void* dst, int destMax,")
    run = run_check(str(copy))
    assert run.returncode == 1
    assert "DIFFER FROM CANN" in run.stdout and "aclrtMemcpy" in run.stdout


def test_an_enum_value_that_differs_fails(copy):
    edit(copy / "csrc/include/flagos/acl_subset_types.h", "ACL_BF16 = 27", "ACL_BF16 = 28")
    run = run_check(str(copy))
    assert run.returncode == 1
    assert "ACL_BF16 differs from CANN's" in run.stdout


def test_backend_code_that_needs_more_than_cann_declares_fails(copy):
    # ACLNN_SUCCESS lives in aclnn/opdev/op_errno.h, which acl.h and acl_meta.h do not include.
    launch = copy / "csrc/runtime/launch.cc"
    edit(launch, "status == kAclnnSuccess", "status == ACLNN_SUCCESS")
    run = run_check(str(copy), str(launch))
    assert run.returncode == 1, run.stdout
    assert "csrc/runtime/launch.cc: does not compile against CANN's headers" in run.stdout
    assert "ACLNN_SUCCESS" in run.stdout


def test_hccl_declarations_match_cann():
    run = run_check(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "HCCL declarations: match CANN" in run.stdout


def test_an_hccl_prototype_that_differs_fails(copy):
    edit(copy / "csrc/include/flagos/hccl_subset_functions.h",
         "HcclResult HcclBroadcast(void* buf, uint64_t count,", "HcclResult HcclBroadcast(void* buf, uint32_t count,")
    run = run_check(str(copy))
    assert run.returncode == 1
    assert "HCCL declarations: DIFFER FROM CANN" in run.stdout and "HcclBroadcast" in run.stdout


def test_an_hccl_enum_value_that_differs_fails(copy):
    edit(copy / "csrc/include/flagos/hccl_subset_types.h", "HCCL_DATA_TYPE_BFP16 = 11", "HCCL_DATA_TYPE_BFP16 = 12")
    run = run_check(str(copy))
    assert run.returncode == 1
    assert "HCCL_DATA_TYPE_BFP16 differs from CANN's" in run.stdout


def test_an_hccl_root_info_of_another_size_fails(copy):
    edit(copy / "csrc/include/flagos/hccl_subset_types.h", "HCCL_ROOT_INFO_BYTES = 4108", "HCCL_ROOT_INFO_BYTES = 4096")
    run = run_check(str(copy))
    assert run.returncode == 1
    assert "HCCL_ROOT_INFO_BYTES differs from CANN's" in run.stdout
