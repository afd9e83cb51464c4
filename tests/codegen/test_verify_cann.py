"""`python -m codegen --verify-cann`: the registry and the project's CANN
declarations against checkouts of CANN's repositories.

The checkouts here are made by the test from the registry itself (CANN's own
files are not part of the project), then one declaration is changed: every
kind of difference must be reported, with exit 1."""

from __future__ import annotations

import os

import pytest

from codegen.registry import Paths, load_registry

REPOS = ("ops-math", "ops-nn", "ops-cv", "ops-transformer")


def fake_cann(ws, tmp_path) -> dict[str, str]:
    """Checkouts in which every registry prototype is declared as the registry says."""
    registry = load_registry(Paths(ws.root))
    files: dict[str, list[str]] = {}
    for proto in registry.prototypes:
        params = ", ".join([p.declaration for p in proto.params] + ["uint64_t *workspaceSize",
                                                                     "aclOpExecutor **executor"])
        decl = (f"ACLNN_API aclnnStatus {proto.name}GetWorkspaceSize({params});\n"
                f"ACLNN_API aclnnStatus {proto.name}(void *workspace, uint64_t workspaceSize, "
                f"aclOpExecutor *executor, const aclrtStream stream);\n")
        path = f"{proto.source_repo}/{proto.source_path}"
        files.setdefault(path, []).append(f"```Cpp\n{decl}```\n" if path.endswith(".md") else decl)
    for repo in REPOS:
        (tmp_path / "cann" / repo).mkdir(parents=True, exist_ok=True)
    for path, decls in files.items():
        full = tmp_path / "cann" / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text("#pragma once\n/* a comment with aclnnNotAnOp(int x); */\n" + "".join(decls))
    return {repo: str(tmp_path / "cann" / repo) for repo in REPOS}


@pytest.fixture
def cann(ws, tmp_path):
    return fake_cann(ws, tmp_path)


def verify(ws, cann, *extra):
    return ws.run("--verify-cann", *[f"{repo}={path}@test" for repo, path in cann.items()], *extra)


def test_registry_equal_to_its_sources_passes(ws, cann):
    run = verify(ws, cann)
    assert run.code == 0, run.out + run.err
    assert "hicann/ops-nn at test" in run.out
    total = len(load_registry(Paths(ws.root)).prototypes)
    assert f"{total} of {total} prototypes compared" in run.out and "0 difference(s)" in run.out


@pytest.mark.parametrize("old,new,message", [
    ("params: [const aclTensor* self, const aclTensor* out]\n  outputs: [out]\naclnnInplaceRelu:",
     "params: [const aclTensor* self, aclTensor* out]\n  outputs: [out]\naclnnInplaceRelu:",
     "aclnnRelu: parameter 2 is `aclTensor* out` in the registry, `const aclTensor* out` in"),
    ("aclTensor* varOut, aclTensor* meanOut]", "aclTensor* meanOut, aclTensor* varOut]",
     "aclnnVarMean: parameter 5 is `aclTensor* meanOut` in the registry, `aclTensor* varOut` in"),
    ("source: hicann/ops-math/math/abs/op_api/aclnn_abs.h", "source: hicann/ops-math/math/abs/op_api/aclnn_abs2.h",
     "aclnnAbs: its source hicann/ops-math/math/abs/op_api/aclnn_abs2.h does not exist in the checkout"),
])
def test_a_registry_that_differs_is_reported(ws, cann, old, new, message):
    ws.edit("yaml/aclnn.yaml", old, new)
    run = verify(ws, cann)
    assert run.code == 1
    assert message in run.out, run.out
    assert "yaml/aclnn.yaml:" in run.out


def test_phase_two_and_missing_declarations_are_reported(ws, cann):
    header = os.path.join(cann["ops-math"], "math/add/op_api/aclnn_add.h")
    with open(header) as handle:
        text = handle.read()
    text = text.replace("ACLNN_API aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize,",
                        "ACLNN_API aclnnStatus aclnnAdds(void *workspace, uint32_t workspaceSize,")
    text = text.replace("aclnnInplaceAddsGetWorkspaceSize", "aclnnInplaceAddsV2GetWorkspaceSize")
    text = text.replace("aclnnAddGetWorkspaceSize(const aclTensor* self,", "aclnnAddGetWorkspaceSize(int64_t mode, "
                        "const aclTensor* self,")
    with open(header, "w") as handle:
        handle.write(text)
    run = verify(ws, cann)
    assert run.code == 1
    assert "aclnnAdds: phase 2 at hicann/ops-math/math/add/op_api/aclnn_add.h" in run.out
    assert "aclnnInplaceAdds: hicann/ops-math/math/add/op_api/aclnn_add.h declares no aclnnInplaceAddsGetWorkspaceSize" \
        in run.out
    assert "aclnnAdd: 4 parameter(s) in the registry, 5 in hicann/ops-math/math/add/op_api/aclnn_add.h" in run.out


def test_subset_declarations_are_compared_with_runtime_and_opbase(ws, cann, tmp_path):
    runtime = tmp_path / "cann" / "runtime" / "include" / "external" / "acl"
    (runtime / "error_codes").mkdir(parents=True)
    (runtime / "acl_rt.h").write_text(
        "ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,\n"
        "                                         aclrtMemcpyKind kind);\n"
        "ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int64_t deviceId);\n")
    (runtime / "acl_base_rt.h").write_text("typedef enum { ACL_FLOAT = 0, ACL_FLOAT16 = 1, ACL_BF16 = 26 } aclDataType;\n"
                                           "static const int ACL_SUCCESS = 0;\n")
    (runtime / "acl_base.h").write_text("\n")
    (runtime / "error_codes" / "rt_error_codes.h").write_text("#define ACL_ERROR_RT_CONTEXT_NULL 107002\n")
    opbase = tmp_path / "cann" / "opbase" / "include" / "nnopbase"
    (opbase / "aclnn").mkdir(parents=True)
    (opbase / "opdev").mkdir(parents=True)
    (opbase / "aclnn" / "acl_meta.h").write_text("ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *t);\n")
    (opbase / "opdev" / "op_errno.h").write_text("#define ACLNN_ERR_INNER_NULLPTR 561104\n")
    # the project's subset headers, copied into the workspace root
    import shutil
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "csrc", "include"),
                    ws.path("csrc", "include"))
    run = ws.run("--verify-cann", f"runtime={tmp_path / 'cann' / 'runtime'}", f"opbase={tmp_path / 'cann' / 'opbase'}")
    assert run.code == 1
    assert "aclrtSetDevice: aclError (int32_t) here, aclError (int64_t) in hicann/runtime" in run.out
    assert "ACL_BF16 is 27 here, 26 in hicann/runtime" in run.out
    assert "ACLNN_ERR_INNER_NULLPTR is 561103 here, 561104 in hicann/opbase" in run.out
    assert "aclrtMemcpy:" not in run.out  # equal up to spacing
    assert "is declared here but in none of CANN's headers checked" in run.out  # e.g. aclrtFree


def test_a_missing_checkout_is_a_usage_error(ws, tmp_path):
    run = ws.run("--verify-cann", str(tmp_path / "nowhere" / "ops-math"))
    assert run.code == 2
    assert "no such folder" in run.err
    run = ws.run("--verify-cann", f"elsewhere={tmp_path}")
    assert run.code == 2 and "not one of CANN's repositories" in run.err


def test_a_doc_source_with_a_header_in_cann_is_reported(ws, cann):
    """aclnnIsInf's source is its doc (CANN generated its header at build time); once a
    checkout has a header that declares it, the header is the source to name."""
    text = ws.read("yaml", "aclnn.yaml")
    assert "source: hicann/ops-math/math/is_inf/docs/aclnnIsInf.md" in text
    # The negative control: the doc is the only declaration, nothing is reported.
    assert verify(ws, cann).code == 0
    header = os.path.join(cann["ops-math"], "math", "is_inf", "op_api", "aclnn_is_inf.h")
    os.makedirs(os.path.dirname(header))
    with open(header, "w") as handle:
        handle.write("ACLNN_API aclnnStatus aclnnIsInfGetWorkspaceSize(const aclTensor *self, aclTensor *out, "
                     "uint64_t *workspaceSize, aclOpExecutor **executor);\n")
    experimental = os.path.join(cann["ops-math"], "experimental", "math", "is_inf", "aclnn_is_inf.h")
    os.makedirs(os.path.dirname(experimental))
    with open(experimental, "w") as handle:
        handle.write(open(header).read())
    run = verify(ws, cann)
    assert run.code == 1
    line = text[:text.index("aclnnIsInf:")].count("\n") + 1
    assert (f"yaml/aclnn.yaml:{line}: aclnnIsInf: its source is the doc hicann/ops-math/math/is_inf/docs/"
            "aclnnIsInf.md, but hicann/ops-math/math/is_inf/op_api/aclnn_is_inf.h declares it") in run.out, run.out
    # A header that only mentions the operator (a call in a comment) is no declaration.
    os.remove(header)
    os.remove(experimental)
    with open(header, "w") as handle:
        handle.write("/* see aclnnIsInfGetWorkspaceSize(self, out, &size, &executor); */\n")
    assert verify(ws, cann).code == 0
