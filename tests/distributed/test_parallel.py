"""Training past one device on the "hccl" backend (tests/distributed/
parallel_worker.py): FSDP2 on 4 processes, tensor parallel on 2, FSDP x TP on
4, and a distributed checkpoint saved on 4 processes and loaded on 2, each
against the same training of a small transformers Llama in one process. No
rank may launch on a device other than its own. Two jobs (one per world
size), running at once, run every scenario: each job sets up a process
group and its communicators."""

from __future__ import annotations

import pytest

pytest.importorskip("torch_fl")
pytest.importorskip("transformers")

from jobs import Job  # noqa: E402

ON_4 = "fsdp,fsdp_mixed,fsdp_tp,dcp_save"
ON_2 = "tp,dcp_load"  # dcp_load reads the checkpoint dcp_save writes on 4


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """Both jobs run at once; dcp_load waits for dcp_save's checkpoint."""
    folder = tmp_path_factory.mktemp("parallel")
    status = folder / "checkpoint-status"
    env = {"CHECKPOINT_DIR": str(folder / "checkpoint"), "CHECKPOINT_STATUS": str(status)}
    on_4 = Job(folder, ON_4, 4, timeout=900, pg_timeout=120, script="parallel_worker.py", env=env)
    on_2 = Job(folder, ON_2, 2, timeout=900, pg_timeout=120, script="parallel_worker.py", env=env)
    done = {4: on_4.wait()}
    if not status.exists():  # dcp_save failed or never ran: dcp_load must not wait for it
        status.write_text("dcp_save ended without saving")
    done[2] = on_2.wait()
    return done


@pytest.mark.parametrize("scenario,world", [("fsdp", 4), ("fsdp_mixed", 4), ("tp", 2), ("fsdp_tp", 4),
                                            ("dcp_save", 4), ("dcp_load", 2)])
def test_matches_single_process_training(jobs, scenario, world):
    codes, found, outputs = jobs[world]
    # A job runs its scenarios in order and stops at the first failure: judge
    # each scenario by its own result, not by the job's exit status.
    for rank in found:
        result = (found[rank] or {}).get(scenario) or {}
        detail = result.get("error") or outputs[rank][-3000:]
        assert result.get("ok"), f"rank {rank} (exit {codes[rank]}), {scenario}:\n{detail}"
    print(f"{scenario} on {world} processes: max abs difference {found[0][scenario]['max_abs_diff']}")
