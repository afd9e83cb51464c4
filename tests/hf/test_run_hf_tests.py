"""The HF test-suite runner (run_hf_tests.py) on a small stand-in for a
library's tests/ folder: its device variables, the touched-device count
(with a test that never touches the device as the negative control), a
crash counted and resumed after, and the locally built hub tokenizer."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("run_hf_tests", HERE / "run_hf_tests.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

# Reads the device the way diffusers' testing_utils does (its environment
# variable), so the test shows which device each mode selected.
STAND_IN = '''
import os
import torch

DEVICE = os.environ["DIFFUSERS_TEST_DEVICE"]


def test_on_device():
    x = torch.ones(4, device=DEVICE)
    assert (x + 1).sum().item() == 8


def test_host_only():
    assert torch.ones(4).sum().item() == 4


def test_dies_on_flagos():
    if DEVICE == "flagos":
        os.abort()
'''


def _library(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "__init__.py").write_text("")
    (src / "tests" / "test_stand_in.py").write_text(STAND_IN)
    return src


def test_modes_touched_and_crash(tmp_path):
    cache = tmp_path / "cache"
    runner.FAMILIES["stand-in"] = ("diffusers", ("tests/test_stand_in.py",))
    try:
        rc = runner.main(["--diffusers", str(_library(tmp_path)), "--families", "stand-in",
                          "--modes", "cpu,flagos", "--cache", str(cache),
                          "--json", str(tmp_path / "s.json")])
    finally:
        del runner.FAMILIES["stand-in"]
    assert rc == 0
    row = json.loads((tmp_path / "s.json").read_text())["families"]["stand-in"]
    assert row["cpu_passed"] == 3
    assert row["flagos_passed"] == 2
    assert row["flagos_crashes"] == 1
    # test_on_device launched kernels; test_host_only passed without any.
    assert row["flagos_touched"] == 1
    assert (cache / "diffusers" / runner.SPEC_FILE).exists()


def test_device_spec_names_flagos_functions(tmp_path):
    (tmp_path / runner.SPEC_FILE).write_text(runner.DEVICE_SPEC)
    code = ("import flagos_device_spec as s; "
            "assert s.DEVICE_NAME == 'flagos'; s.MANUAL_SEED_FN(0); s.EMPTY_CACHE_FN(); "
            "s.RESET_PEAK_MEMORY_STATS_FN(); print(s.DEVICE_COUNT_FN(), s.MAX_MEMORY_ALLOCATED_FN())")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path)] + sys.path)})
    assert out.returncode == 0, out.stderr
    count, _ = out.stdout.split()
    assert int(count) >= 1


def test_local_tokenizer_loads_offline(tmp_path):
    runner.build_tokenizers(tmp_path)
    code = ("from transformers import Qwen2Tokenizer; "
            "t = Qwen2Tokenizer.from_pretrained('hf-internal-testing/tiny-random-Qwen2VLForConditionalGeneration'); "
            "ids = t('<|im_start|>hi<|im_end|>').input_ids; print(ids[0], ids[-1], t.decode(ids))")
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    first, last, text = out.stdout.split(maxsplit=2)
    assert text.strip() == "<|im_start|>hi<|im_end|>"
    assert first != last  # two different special tokens, each a single id
    # Negative control: another hub id is not in the cache, and offline it fails.
    bad = code.replace("tiny-random-Qwen2VLForConditionalGeneration", "not-built-here")
    assert subprocess.run([sys.executable, "-c", bad], capture_output=True, env=env).returncode != 0


def test_transformers_tree_links_installed_package(tmp_path):
    # transformers' test_pipeline_mixin imports <root>/src/transformers; the
    # copy points it at the installed package. diffusers' copy gets no link.
    import transformers

    for lib in ("transformers", "diffusers"):
        dest = runner.materialise(lib, _library(tmp_path / lib), None, tmp_path / "cache")
        link = dest / "src" / "transformers"
        if lib == "diffusers":
            assert not link.exists()
        else:
            assert link.resolve() == Path(transformers.__file__).resolve().parent


def test_tolerance_edit_gives_flagos_npus_tolerances(tmp_path, capsys):
    (path, before, after), = runner.TOLERANCE_EDITS["transformers"]
    lines = ['if torch_device in ["cpu", "cuda"]:\n', f"{before}\n", "else:\n"]
    common = tmp_path / path
    common.parent.mkdir(parents=True)
    common.write_text("".join(lines))
    assert runner.apply_edit(common, before, after)
    assert common.read_text() == "".join([lines[0], f"{after}\n", lines[2]])
    assert runner.apply_edit(common, before, after)  # a second copy leaves it as it is
    assert common.read_text().count("flagos") == 1
    # Negative control: a file without that line (another release) is left alone, with a warning.
    other = tmp_path / "other.py"
    other.write_text(lines[0])
    assert not runner.apply_edit(other, before, after)
    assert other.read_text() == lines[0] and "TOLERANCE_EDITS" in capsys.readouterr().err
