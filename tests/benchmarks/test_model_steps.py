"""The model-step benchmark (benchmarks/models.py) runs each step once and
reports where it launched: every step on the devices it was placed on, none
on the current device, 0 on the CPU fallback. Timings are not judged."""

import pytest
import torch

import torch_fl

pytest.importorskip("diffusers")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from benchmarks import models  # noqa: E402


@pytest.fixture(scope="module")
def figures():
    torch_fl._C._reset_fallback_counts()
    result = models.run_all(1)
    assert torch_fl._C._fallback_counts() == {}
    return result


def test_denoise_step_launches_where_its_parts_live(figures):
    step = figures["qwen_image_denoise_step"]["per_step"]
    assert set(step["launches"]) == {"flagos:1", "flagos:2", "flagos:3"}
    assert step["set_device_calls"] > 0  # flagos:0 stays current: every launch switches and restores


def test_decode_step_one_device_and_split(figures):
    decode = figures["llm_decode_step"]
    assert set(decode["one_device"]["per_step"]["launches"]) == {"flagos:1"}
    assert set(decode["split"]["per_step"]["launches"]) == {"flagos:1", "flagos:2"}
    assert torch.flagos.current_device() == 0


def test_table_has_a_row_per_step(figures):
    rows = models.table(figures).splitlines()[2:]
    assert len(rows) == 3 and all("set-device calls" in row for row in rows)
