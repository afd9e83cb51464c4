"""The empty-tensor policy in the generated C++: every wrapper that launches
first returns when none of the tensors its launches write holds an element
(docs/codegen.md, "The generated wrapper"). tests/generated/test_empty_tensors.py
runs it."""

from __future__ import annotations

import re

from codegen.cpp import split_top
from codegen.gen_kernels import SHARDS, shard_file
from codegen.main import REPO_ROOT as REPO
from codegen.registry import Paths, load_registry

REGISTRY = load_registry(Paths(REPO))

WRAPPER = re.compile(r"\n\S[^\n]* (wrapper_\w+)\([^{;]*\{\n(.*?)\n\}\n", re.S)
SKIP = re.compile(r"  if \(flagos::gen::nothing_to_write\((.*)\)\) return [^\n]*;\n")
VIEW = re.compile(r"flagos::gen::(?:at_least_1d|flat_if_none)\((\w+)(?:, \w+)?\)")
LAUNCH = re.compile(r"FLAGOS_GUARDED_LAUNCH\(launch_device, (aclnn\w+), (.*)\);")
# An output the launch resizes (isin.Scalar_Tensor's meta function sizes it
# [0], the launch makes it 0-dim): empty when looked at, so never skipped.
RESIZED = re.compile(r"flagos::gen::zero_dim\(\w+\)")


def _split(args: str) -> list[str]:
    """Top-level comma-separated C++ arguments."""
    return [part.strip() for part in split_top(args)]


def _tensor(arg: str) -> str:
    """The output a view of it names (`flagos::gen::at_least_1d(values)`: `values`), whose size is the view's."""
    view = VIEW.fullmatch(arg)
    return view.group(1) if view else arg


def wrappers_without_the_rule(kernels: str) -> list[str]:
    """The wrappers that launch without first skipping an empty result, or whose skip
    leaves out a tensor one of their launches writes, or that skip although a
    launch resizes its output."""
    missing = []
    for name, body in WRAPPER.findall(kernels):
        launches = LAUNCH.findall(body)
        if not launches:
            continue  # a handwritten body's wrapper: the body launches
        skip = SKIP.search(body)
        if any(RESIZED.search(args) for _, args in launches):
            if skip is not None:
                missing.append(name)
            continue
        if skip is None or skip.start() > body.index("FLAGOS_GUARDED_LAUNCH"):
            missing.append(name)
            continue
        checked = set(_split(skip.group(1)))
        for entry, args in launches:
            params = REGISTRY.prototype(entry).params
            written = {_tensor(arg) for arg, param in zip(_split(args), params) if param.is_output}
            if not written <= checked:
                missing.append(name)
    return missing


def _kernels() -> str:
    parts = []
    for index in range(SHARDS):
        with open(f"{REPO}/csrc/generated/{shard_file(index)}", encoding="utf-8") as handle:
            parts.append(handle.read())
    return "".join(parts)


def test_every_launching_wrapper_skips_an_empty_result():
    kernels = _kernels()
    assert len(WRAPPER.findall(kernels)) > 300
    assert wrappers_without_the_rule(kernels) == []


def test_the_check_sees_a_missing_rule():
    """The negative control: without the skips, every launching wrapper is reported."""
    kernels = _kernels()
    launching = [name for name, body in WRAPPER.findall(kernels)
                 if LAUNCH.search(body) and not RESIZED.search(body)]
    assert len(launching) > 250
    assert wrappers_without_the_rule(SKIP.sub("", kernels)) == launching


def test_a_skip_that_forgets_an_output_is_reported():
    kernels = _kernels().replace("nothing_to_write(values, indices)", "nothing_to_write(values)")
    assert "wrapper_max_dim" in wrappers_without_the_rule(kernels)


def test_a_launch_that_resizes_its_output_is_not_skipped():
    """isin.Scalar_Tensor's output is [0] after its meta function and 0-dim
    after the launch: a skip there would return the wrong shape."""
    kernels = _kernels()
    assert "wrapper_isin_Scalar_Tensor" not in wrappers_without_the_rule(kernels)
    skipping = kernels.replace("  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnIsInScalarTensor,",
                               "  if (flagos::gen::nothing_to_write(out)) return out;\n"
                               "  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnIsInScalarTensor,")
    assert "wrapper_isin_Scalar_Tensor" in wrappers_without_the_rule(skipping)
