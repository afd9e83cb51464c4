"""torch.profiler on flagos: device kernel events, per device and stream, from
the runtime's launch records (csrc/runtime/profiler.cc, docs/profiler.md).

The profiling runs in a subprocess, once for the module (a broken plugin
crashes inside Kineto): it profiles a training step of a small MLP on
flagos:0 and one on flagos:1 (examples/profile_training_step.py), in several configurations, exports each
Chrome trace and prints what the tests check."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch_fl")

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch, torch_fl
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    out_dir = sys.argv[1]
    WITH_DEVICE = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]

    sys.path.insert(0, os.path.join(sys.argv[2], "examples"))
    from profile_training_step import make, step  # the example's MLP and training step

    setups = [make("flagos:0"), make("flagos:1")]
    for s in setups:
        step(*s)
    torch_fl.sim.drain_streams()

    def run(name, activities):
        with profile(activities=activities) as prof:
            for s in setups:
                step(*s)
        trace = os.path.join(out_dir, name + ".json")
        prof.export_chrome_trace(trace)
        events = prof.events()
        return {
            "trace": trace,
            "device_events": [
                {"name": e.name, "on_flagos": e.device_type == DeviceType.PrivateUse1, "device": e.device_index,
                 "start": e.time_range.start, "end": e.time_range.end}
                for e in events if e.device_type != DeviceType.CPU],
            "ops_with_kernels": [
                {"name": e.name, "start": e.time_range.start, "end": e.time_range.end,
                 "kernels": [[k.name, k.device, k.duration] for k in e.kernels]}
                for e in events if e.kernels],
            "host_window": [min(e.time_range.start for e in events if e.device_type == DeviceType.CPU),
                            max(e.time_range.end for e in events if e.device_type == DeviceType.CPU)],
            "key_averages": [
                {"key": a.key, "on_flagos": a.device_type == DeviceType.PrivateUse1,
                 "on_cpu": a.device_type == DeviceType.CPU, "count": a.count,
                 "self_device_time": a.self_device_time_total, "device_time": a.device_time_total}
                for a in prof.key_averages()],
        }

    results = {"first": run("first", WITH_DEVICE), "second": run("second", WITH_DEVICE),
               "cpu_only": run("cpu_only", [ProfilerActivity.CPU])}
    # A kernel on a stream of flagos:1 other than its default one.
    side = torch.flagos.Stream("flagos:1")
    x = torch.ones(4, device="flagos:1")
    torch.flagos.synchronize(1)
    with profile(activities=WITH_DEVICE) as prof:
        with torch.flagos.stream(side):
            x.mul_(2)
    trace = os.path.join(out_dir, "side_stream.json")
    prof.export_chrome_trace(trace)
    results["side_stream"] = {"trace": trace, "stream_id": side.stream_id}
    torch_fl._C._set_profiler_plugin_enabled(False)
    results["plugin_off"] = run("plugin_off", WITH_DEVICE)
    print(json.dumps(results))
    """
)

# One kernel of each part of the step: forward, loss, backward, SGD.
EXPECTED_KERNELS = {"aclnnAddmm", "aclnnRelu", "aclnnMseLoss", "aclnnMseLossBackward", "aclnnThresholdBackward"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("traces")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(out), str(REPO)], env=env, cwd="/tmp", capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_device_kernels(run):
    """What a user profiling flagos must see: kernels with device time in key_averages, on both devices."""
    rows = {r["key"]: r for r in run["key_averages"] if r["on_flagos"]}
    assert EXPECTED_KERNELS <= rows.keys(), f"kernel rows {sorted(rows)}"
    for name in EXPECTED_KERNELS:
        assert rows[name]["self_device_time"] > 0, rows[name]
    assert {e["device"] for e in run["device_events"]} == {0, 1}
    # The host ops that launched them show the device time too.
    addmm = next(r for r in run["key_averages"] if r["key"] == "aten::addmm")
    assert addmm["device_time"] > 0, addmm


def test_training_step_shows_kernels_per_device(runs):
    check_device_kernels(runs["first"])
    counts = {}
    for e in runs["first"]["device_events"]:
        assert e["on_flagos"]
        assert e["end"] >= e["start"]
        counts[e["device"]] = counts.get(e["device"], 0) + 1
    assert counts[0] == counts[1]  # the same step on each device


def test_kernels_are_tied_to_the_op_that_launched_them(runs):
    ops = runs["first"]["ops_with_kernels"]
    addmm = [op for op in ops if op["name"] == "aten::addmm"]
    assert addmm and all(k[0] == "aclnnAddmm" and k[2] > 0 for op in addmm for k in op["kernels"])
    assert {k[1] for op in addmm for k in op["kernels"]} == {0, 1}


def test_device_and_host_times_share_a_clock(runs):
    run = runs["first"]
    start, end = run["host_window"]
    for e in run["device_events"]:
        # A kernel runs after the first host op of the profile began and
        # ends before the profile has stopped draining it: within a few
        # seconds of the host's window, not years off as another clock's would be.
        assert start <= e["start"] and e["end"] <= end + 5e6, (e, run["host_window"])
    # Each aclnnAddmm starts after the aten::addmm that launched it started;
    # then the k-th earliest kernel starts after the k-th earliest op.
    ops = sorted(op["start"] for op in run["ops_with_kernels"] if op["name"] == "aten::addmm")
    kernels = sorted(e["start"] for e in run["device_events"] if e["name"] == "aclnnAddmm")
    assert len(ops) == len(kernels) == 4  # two Linear layers on each device
    assert all(k >= op for k, op in zip(kernels, ops)), (kernels, ops)


def test_chrome_trace_has_a_track_per_device_and_stream(runs):
    trace = json.loads(Path(runs["first"]["trace"]).read_text())
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert {e["pid"] for e in kernels} == {0, 1}
    assert {e["tid"] for e in kernels} == {0}  # the default stream of each device
    assert EXPECTED_KERNELS <= {e["name"] for e in kernels}
    names = {(e["pid"], e["name"]): e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M"
             and e["name"] in ("process_name", "thread_name") and e["pid"] in (0, 1)}
    assert names[(0, "process_name")] == "flagos:0" and names[(1, "process_name")] == "flagos:1"
    assert names[(0, "thread_name")] == "stream 0"


def test_a_kernel_on_a_side_stream_is_on_that_streams_track(runs):
    run = runs["side_stream"]
    assert run["stream_id"] != 0
    trace = json.loads(Path(run["trace"]).read_text())
    kernels = [(e["pid"], e["tid"], e["name"]) for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert kernels == [(1, run["stream_id"], "aclnnInplaceMuls")]
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == 1}
    assert names[run["stream_id"]] == f"stream {run['stream_id']}"


def test_negative_control_plugin_off_shows_no_device_kernels(runs):
    assert not runs["plugin_off"]["device_events"]
    with pytest.raises(AssertionError):
        check_device_kernels(runs["plugin_off"])


def test_profiling_twice_in_one_process(runs):
    check_device_kernels(runs["second"])

    def counts(run):
        out = {}
        for e in run["device_events"]:
            out[(e["name"], e["device"])] = out.get((e["name"], e["device"]), 0) + 1
        return out

    # The same step: the same kernels, none left over from the first profile.
    assert counts(runs["second"]) == counts(runs["first"])


def test_cpu_activity_alone_adds_no_device_events(runs):
    run = runs["cpu_only"]
    assert not run["device_events"]
    assert all(r["on_cpu"] for r in run["key_averages"])
    trace = json.loads(Path(run["trace"]).read_text())
    assert not [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
