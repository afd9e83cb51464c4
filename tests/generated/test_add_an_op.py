"""docs/codegen.md "Adding an op", end to end: a throwaway unary op gets its
ACLNN prototype (CANN's own), its registry entry and its simulator operator,
the doc's own blocks (tests/benchmarks/test_new_op.py checks that the doc
shows every command this runs);
`python -m codegen` regenerates, ninja rebuilds incrementally, `--check`
passes, the op runs on flagos:1 without the CPU fallback, and the tests that
read the registry (tests/generated, the device matrix) pick it up and pass.
Then the same for "Adding an op of a new family", on top: an op whose
registry file (yaml/ops/<family>.yaml) and simulator file
(csrc/sim/opapi/ops_<family>.cc) the doc's blocks create.

It runs in an overlay of the repository (benchmarks/new_op.py): the build
directory's objects are reused, nothing of the repository is modified. It
also checks what the incremental build promises: a new operator recompiles
one backend object (the shard that launches it) and one simulator object
(the unity batch of the file that defines it), a one-op policy change one
backend object.

The timings are in `python -m benchmarks`, not asserted here.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from benchmarks import new_op  # noqa: E402

missing = [tool for tool in ("cmake", "ninja", "c++") if shutil.which(tool) is None]
pytestmark = [
    pytest.mark.skipif(bool(missing), reason=f"no build toolchain: {', '.join(missing)} not found"),
    pytest.mark.skipif(not os.path.exists(os.path.join(REPO, "build", "cmake", "build.ninja")),
                       reason="no configured build in build/cmake (pip install --no-build-isolation -e . makes one)"),
]


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    return new_op.run(str(tmp_path_factory.mktemp("new_op")), with_tests=True, new_family=True)


@pytest.fixture(scope="module")
def new_family(added):
    assert added["status"] == "ok", added["status"]
    return added["new_family"]


@pytest.fixture(params=["existing family", "new family"])
def flow(request, added):
    """The result of one of the doc's two ways to add an op (both ran in the one overlay)."""
    assert added["status"] == "ok", added["status"]
    result = added if request.param == "existing family" else added["new_family"]
    assert result["status"] == "ok", result["status"]
    return result


def new_family_files(op: dict) -> dict[str, str]:
    return {"registry": f"yaml/ops/{op['family']}.yaml", "simulator": f"csrc/sim/opapi/ops_{op['family']}.cc"}


def test_the_op_is_generated_built_and_checked(flow):
    op = flow["op"]
    assert flow["codegen"]["exit"] == 0
    assert flow["docs"]["exit"] == 0 and "README.md" in flow["docs"]["output"], flow["docs"]
    assert f"aclnn/{op['aclnn']}.h" in flow["codegen"]["output"]
    assert flow["rebuild"]["exit"] == 0
    assert flow["check"]["exit"] == 0, flow["check"]["stderr"]


def test_the_new_family_blocks_made_its_two_files(new_family):
    family = new_family_files(new_family["op"])
    assert new_family["edited"] == ["yaml/aclnn.yaml", family["simulator"], family["registry"]]


def test_a_new_operator_recompiles_one_backend_and_one_simulator_object(added):
    assert added["status"] == "ok", added["status"]
    if "overlay" not in added["where"]:
        pytest.skip(f"built from scratch: {added['where']}")
    planned = added["rebuild"]["rebuilt"]
    assert len(planned["backend"]) == 1 and planned["backend"][0].endswith(".cpp.o"), planned
    # The simulator's operator files compile in unity batches (csrc/sim/CMakeLists.txt):
    # one object, the batch that holds the file the doc's operator went to.
    sim_file = next(os.path.basename(f) for f in added["edited"] if f.startswith("csrc/sim/"))
    assert len(planned["simulator"]) == 1, planned
    assert sim_file in added["rebuild"]["simulator_sources"][planned["simulator"][0]], added["rebuild"]
    assert planned["other"] == [], planned


def test_a_new_family_recompiles_one_shard_and_the_batches_from_its_file_on(added, new_family):
    """The glob finds the new simulator file: its unity batch is rebuilt, and a later batch only
    where the new file shifted its files; never a batch of files sorted before it."""
    assert new_family["status"] == "ok", new_family["status"]
    if "overlay" not in added["where"]:
        pytest.skip(f"built from scratch: {added['where']}")
    planned = new_family["rebuild"]["rebuilt"]
    assert len(planned["backend"]) == 1 and planned["backend"][0].endswith(".cpp.o"), planned
    assert planned["other"] == [], planned
    new_file = os.path.basename(new_family_files(new_family["op"])["simulator"])
    batches = new_family["rebuild"]["simulator_sources"]
    assert any(new_file in sources for sources in batches.values()), batches
    for obj, sources in batches.items():
        assert new_file in sources or min(sources) > new_file, (obj, sources)


def test_the_op_runs_on_its_device(flow):
    call, op = flow["call"], flow["op"]
    assert call["device"] == "flagos:1"
    assert call["matches_cpu"]
    assert call["launches"] >= 1, call
    assert not any(name.startswith(op["op"]) for name in call["fallback_ops"]), call["fallback_ops"]


def test_the_registry_tests_pick_it_up(flow):
    tests = flow["tests"]
    assert tests["exit"] == 0, tests["output"]
    assert "passed" in tests["summary"] and "failed" not in tests["summary"], tests["summary"]


def test_a_one_op_change_recompiles_one_object(added):
    assert added["status"] == "ok", added["status"]
    if "overlay" not in added["where"]:
        pytest.skip(f"built from scratch: {added['where']}")
    planned = added["one_op_change"]["rebuilt"]
    assert added["one_op_change"]["exit"] == 0
    assert len(planned["backend"]) == 1 and planned["simulator"] == [] and planned["other"] == [], planned


def test_the_repository_is_untouched(added, new_family):
    """The overlay took every write: the repository has neither op, nor the new family's files."""
    assert added["status"] == "ok", added["status"]
    with open(os.path.join(REPO, "yaml", "aclnn.yaml"), encoding="utf-8") as handle:
        text = handle.read()
    for op in (added["op"], new_family["op"]):
        assert f"{op['aclnn']}:" not in text
        assert not os.path.exists(os.path.join(REPO, "csrc", "include", "flagos", "aclnn", f"{op['aclnn']}.h"))
    for path in new_family_files(new_family["op"]).values():
        assert not os.path.exists(os.path.join(REPO, path)), path
