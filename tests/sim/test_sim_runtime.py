"""The simulator's tests: runs build/bin/flagos_sim_tests (tests/sim/sim_*.cc)
under the environments its cases need.

In the project's build (build/cmake, from `pip install -e .`) the driver is
not a default target: it is built here, so it is never older than its
sources. Standalone (see csrc/sim/README.md):
  cmake -S csrc/sim -B build/sim -G Ninja -DCMAKE_PREFIX_PATH=<torch cmake prefix> \
        -DFLAGOS_LIB_DIR=$PWD/torch_fl/lib -DFLAGOS_BIN_DIR=$PWD/build/bin
  cmake --build build/sim && ctest --test-dir build/sim
"""

import json
import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / "build" / "bin" / "flagos_sim_tests"
PROJECT_BUILD = REPO / "build" / "cmake"

if (PROJECT_BUILD / "build.ninja").exists():
    # Up to date in a fraction of a second; about 12 s the first time.
    _built = subprocess.run(["ninja", "-C", str(PROJECT_BUILD), "flagos_sim_tests"], capture_output=True, text=True)
    if _built.returncode != 0:
        raise RuntimeError(f"building flagos_sim_tests failed:\n{_built.stdout}{_built.stderr}")

pytestmark = pytest.mark.skipif(
    not BINARY.exists(), reason=f"{BINARY} is not built (build csrc/sim, see csrc/sim/README.md)"
)


def run(*cases, **env):
    """Runs the named cases (all default ones if none) with exactly the given FLAGOS_SIM_* variables."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_SIM_")}
    environ.update(env)
    return subprocess.run(
        [str(BINARY), *cases],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=no_core_dumps,  # a case that must die by SIGSEGV leaves no core file
    )


def no_core_dumps():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def default_cases():
    if not BINARY.exists():
        return ["not-built"]  # skipped by pytestmark, with its reason
    listing = subprocess.run([str(BINARY), "--list"], capture_output=True, text=True, check=True)
    return [line for line in listing.stdout.splitlines() if not line.endswith(" env")]


def line_with(prefix, stdout):
    lines = [line[len(prefix):] for line in stdout.splitlines() if line.startswith(prefix)]
    assert lines, f"no line starting with {prefix!r} in:\n{stdout}"
    return lines[0]


def assert_passed(result):
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed" in result.stdout


# ---- the default cases, one pytest test each, then whole-suite variations ----

@pytest.mark.parametrize("case", default_cases())
def test_case(case):
    assert_passed(run(case))


@pytest.mark.parametrize(
    "env",
    [{"FLAGOS_SIM_PROTECT": "1"}, {"FLAGOS_SIM_DEVICES": "16"}, {"FLAGOS_SIM_ON_MISMATCH": "error"}],
    ids=["protect", "16-devices", "explicit-error-mode"],
)
def test_whole_suite_under(env):
    result = run(**env)
    assert_passed(result)
    assert f"{len(default_cases())} passed" in result.stdout


# ---- devices ----

@pytest.mark.parametrize("value", ["0", "abc", "17", "", "-1", " 4", "4x"])
def test_invalid_device_count_fails_clearly(value):
    result = run("env_invalid_devices", FLAGOS_SIM_DEVICES=value)
    assert_passed(result)  # no crash, and the case's own checks held
    message = line_with("MESSAGE ", result.stdout)
    assert message == f"aclrtGetDeviceCount: FLAGOS_SIM_DEVICES='{value}' is not an integer in 1..16"
    stats = json.loads(line_with("STATS ", result.stdout))
    assert stats["launches"] == {} and stats["live_allocations"] == {}


def test_device_count_from_environment():
    assert_passed(run("env_two_devices", FLAGOS_SIM_DEVICES="2"))
    assert_passed(run("device_count", FLAGOS_SIM_DEVICES="7"))
    assert_passed(run("device_count", FLAGOS_SIM_DEVICES="16"))


def test_default_cases_need_four_devices():
    result = run(FLAGOS_SIM_DEVICES="2")
    assert result.returncode == 2
    assert "at least 4" in result.stdout


# ---- device memory ----

def test_device_memory_from_environment():
    result = run("env_small_device_memory", FLAGOS_SIM_DEVICE_MEMORY="1M")
    assert_passed(result)
    assert line_with("MESSAGE ", result.stdout) == (
        "aclrtMalloc: out of memory on device 0: 1 bytes requested (64 with the runtime's rounding), "
        "0 of 1048576 bytes free"
    )
    assert_passed(run("env_small_device_memory", FLAGOS_SIM_DEVICE_MEMORY="1048576"))
    assert_passed(run("env_small_device_memory", FLAGOS_SIM_DEVICE_MEMORY="1024K"))


@pytest.mark.parametrize("value", ["", "0", "abc", "16GB", "2T", "-1", " 1M", "1.5G"])
def test_invalid_device_memory_fails_clearly(value):
    result = run("env_invalid_device_memory", FLAGOS_SIM_DEVICE_MEMORY=value)
    assert_passed(result)
    assert line_with("MESSAGE ", result.stdout) == (
        f"aclrtMalloc: FLAGOS_SIM_DEVICE_MEMORY='{value}' is not a byte count from 1 to 1T "
        "(digits, optionally followed by K, M, G or T)"
    )


# ---- protect mode ----

def test_host_read_of_device_memory_crashes_in_protect_mode():
    result = run("host_reads_device_memory", FLAGOS_SIM_PROTECT="1")
    assert result.returncode == -signal.SIGSEGV, result.stdout + result.stderr
    assert "runtime copy done" in result.stdout  # the runtime itself may touch the memory
    assert "host read" not in result.stdout


@pytest.mark.parametrize("env", [{}, {"FLAGOS_SIM_PROTECT": "0"}], ids=["unset", "zero"])
def test_host_read_of_device_memory_works_without_protect_mode(env):
    result = run("host_reads_device_memory", **env)
    assert_passed(result)
    assert "host read 42" in result.stdout


def test_invalid_protect_value_fails_clearly():
    result = run("env_invalid_protect", FLAGOS_SIM_PROTECT="yes")
    assert_passed(result)
    assert line_with("MESSAGE ", result.stdout) == "aclrtMalloc: FLAGOS_SIM_PROTECT='yes' must be 0 or 1"


def test_host_read_after_a_kernel_crashes_in_protect_mode():
    """The kernel's worker thread may touch the memory while it runs, the host never."""
    result = run("host_reads_memory_a_kernel_wrote", FLAGOS_SIM_PROTECT="1")
    assert result.returncode == -signal.SIGSEGV, result.stdout + result.stderr
    assert "kernel done" in result.stdout
    assert "host read" not in result.stdout


# ---- stream mode ----

def test_lazy_streams_from_environment():
    assert_passed(run("env_lazy_streams", FLAGOS_SIM_STREAMS="lazy"))


@pytest.mark.parametrize("value", ["", "sync", "LAZY", "lazy "])
def test_invalid_stream_mode_fails_clearly(value):
    result = run("env_invalid_streams", FLAGOS_SIM_STREAMS=value)
    assert_passed(result)
    assert line_with("MESSAGE ", result.stdout) == (
        f"aclrtMemsetAsync: FLAGOS_SIM_STREAMS='{value}' must be 'async' or 'lazy'"
    )


# ---- mismatch mode ----

def test_nan_mode_from_environment():
    assert_passed(run("env_mismatch_nan", FLAGOS_SIM_ON_MISMATCH="nan"))


@pytest.mark.parametrize("value", ["bogus", "", "NaN"])
def test_invalid_mismatch_mode_fails_every_launch(value):
    result = run("env_invalid_mismatch", FLAGOS_SIM_ON_MISMATCH=value)
    assert_passed(result)
    assert line_with("MESSAGE ", result.stdout) == (
        f"aclnnAdd: FLAGOS_SIM_ON_MISMATCH='{value}' must be 'error' or 'nan'"
    )


# ---- fault injection ----

def test_faults_from_environment():
    assert_passed(run("env_faults", FLAGOS_SIM_FAULT="aclnnAdd:2,aclnnCast:1:3"))


@pytest.mark.parametrize("value", ["aclnnAdd", "aclnnAdd:4", "aclnnAdd:1:0", ":1", "aclnnAdd:x", "aclnnAdd:1:2:3"])
def test_invalid_fault_spec_fails_clearly(value):
    result = run("env_invalid_faults", FLAGOS_SIM_FAULT=value)
    assert_passed(result)
    message = line_with("MESSAGE ", result.stdout)
    assert message.startswith(f"aclnnAdd: FLAGOS_SIM_FAULT='{value}' is invalid")


# ---- counters ----

def test_stats_json_counts_a_known_scenario():
    result = run("stats_scenario")
    assert_passed(result)
    stats = json.loads(line_with("STATS ", result.stdout))
    assert stats == {
        "set_device_calls": 2,
        "launches": {"0": 1, "1": 1, "2": 0, "3": 0},
        "rejected_launches": 1,
        "mismatched_launches": 1,
        "live_allocations": {"0": 3, "1": 2, "2": 0, "3": 0},
        "live_bytes": {"0": 36, "1": 32, "2": 0, "3": 0},
        "live_pinned_allocations": 0,
        "live_pinned_bytes": 0,
        "op_launches": {"aclnnAdd": 1, "aclnnCast": 1},
        "peer_copies": 1,
        "live_executors": 0,
        "live_arguments": 5,
        "failed_tasks": 0,
        "hazards": 0,
        "lenient_kernel_errors": 0,
    }


def test_stats_json_has_every_device():
    result = run("stats_scenario", FLAGOS_SIM_DEVICES="9")
    assert_passed(result)
    stats = json.loads(line_with("STATS ", result.stdout))
    for key in ("launches", "live_allocations", "live_bytes"):
        assert list(stats[key]) == [str(d) for d in range(9)]
