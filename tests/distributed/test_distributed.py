"""torch.distributed on flagos with the "hccl" backend, on 2 and 4 processes
(tests/distributed/worker.py): every collective against gloo on the CPU for
several dtypes, with each rank's tensors on flagos:rank+1 while flagos:0 is
current; a negative control with the guards off; a rank that fails; DDP
(examples/ddp_train.py under torchrun) against single-process training."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("torch_fl")

from jobs import ROOT, Job, assert_all_ok  # noqa: E402


@pytest.fixture(scope="module")
def ddp_example(tmp_path_factory):
    """examples/ddp_train.py under torchrun, on 4 processes, in the background:
    its fresh interpreters import torch while the jobs below wait on collectives."""
    folder = tmp_path_factory.mktemp("ddp")
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    env = dict(os.environ, FLAGOS_SIM_DEVICES="4", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with open(folder / "stdout", "w") as out, open(folder / "stderr", "w") as err:
        proc = subprocess.Popen([torchrun, "--standalone", "--nproc-per-node", "4",
                                 os.path.join(ROOT, "examples", "ddp_train.py"), "--steps", "5"],
                                cwd=ROOT, env=env, stdout=out, stderr=err)
    yield proc, folder
    if proc.poll() is None:
        proc.kill()
        proc.wait()


# Both world sizes' jobs run at once, and with the DDP example: a job's ranks
# spend much of their time waiting for each other, time the others can use.
@pytest.fixture(scope="module")
def jobs(tmp_path_factory, ddp_example):
    """A job per world size runs the collectives, then the negative control."""
    folder = tmp_path_factory.mktemp("hccl")
    started = {world: Job(folder, "collectives,negative_control", world) for world in (2, 4)}
    return {world: job.wait() for world, job in started.items()}


@pytest.fixture(params=[2, 4], ids=["2ranks", "4ranks"])
def job(request, jobs):
    return jobs[request.param]


def test_every_collective_matches_gloo_on_a_non_current_device(job):
    codes, found, outputs = job
    assert_all_ok(codes, found, outputs, "collectives")
    for rank in found:  # rank r's collectives all ran on its own device r+1, none on the current device 0
        launches = json.loads(found[rank]["collectives"]["log"][-1].removeprefix("launches "))
        assert launches["0"] == 0 and launches[str(rank + 1)] > 0, launches


def test_negative_control_guards_off_is_rejected(job):
    codes, found, outputs = job
    assert_all_ok(codes, found, outputs, "negative_control")
    log = found[0]["negative_control"]["log"]
    assert "HcclAllReduce returned HCCL_E_PARA" in log[0] and "lives on device 1 but the communicator" in log[0], log
    assert "all tensors of a collective must be on one device" in log[1], log


@pytest.fixture(scope="module")
def failing_jobs(tmp_path_factory):
    """Rank 1 raises or dies; both jobs run at once (each waits out its group's timeout)."""
    folder = tmp_path_factory.mktemp("failing")
    started = {scenario: Job(folder, scenario, 2, pg_timeout=5, timeout=120) for scenario in ("rank_fails", "rank_dies")}
    return {scenario: job.wait() for scenario, job in started.items()}


@pytest.mark.parametrize("scenario", ["rank_fails", "rank_dies"])
def test_a_failing_rank_makes_the_others_fail_within_the_timeout(failing_jobs, scenario):
    codes, found, outputs = failing_jobs[scenario]
    if scenario == "rank_fails":
        assert codes[1] != 0 and "rank 1 fails on purpose" in found[1][scenario]["error"]
    else:
        assert codes[1] == 3 and found[1] is None, (codes, found[1])  # gone without a word
    assert codes[0] == 0 and found[0][scenario]["ok"], found[0] or outputs[0][-3000:]
    message = found[0][scenario]["log"][0]
    assert "HCCL_E_TIMEOUT" in message and "HCCL_EXEC_TIMEOUT" in message, message
    assert "rank(s) 1 never arrived" in message, message


def test_ddp_example_under_torchrun_matches_single_process_training(ddp_example):
    proc, folder = ddp_example
    proc.wait(timeout=300)
    stdout, stderr = (folder / "stdout").read_text(), (folder / "stderr").read_text()
    assert proc.returncode == 0, stdout[-3000:] + stderr[-5000:]
    assert "matches single-process training" in stdout, stdout
