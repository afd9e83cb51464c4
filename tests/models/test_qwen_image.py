"""diffusers' Qwen-Image, the seed's showcase: examples/qwen_image_showcase.py's
twelve cases (QwenImagePipeline itself, its text encoder and tokenizer
included, on the device layouts and in the modes users run), each against
the same pipeline on the CPU with flagos:0 current; their negative control
with the guards off; no Python code selecting a device; the example's own
output; and the transformer and VAE alone on a non-current device."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys

import pytest
import torch

import torch_fl

from .common import assert_close

pytest.importorskip("diffusers")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "qwen_image_showcase.py")
sys.path.insert(0, os.path.dirname(EXAMPLE))
import qwen_image_showcase as showcase  # noqa: E402

NAMES = [case.name for case in showcase.CASES]

# Where each case's components compute (E text encoder, T transformer, V VAE): what the
# table's layout column must say, read back from the placed pipeline.
LAYOUTS = {
    "current": "E,T,V:0", "one-device": "E,T,V:3", "balanced": "E:3 T:2 V:1", "split": "E,V:3 T:1+2",
    "model-offload": "E,T,V:cpu>1", "seq-offload": "E,T,V:cpu>2", "true-cfg": "E,V:3 T:1+2",
    "batch": "E:3 T:2 V:1", "resolutions": "E,V:3 T:1+2", "bf16": "E:3 T:2 V:1", "img2img": "E,V:3 T:1+2",
    "inpaint": "E:3 T:2 V:1",
}

# Builtins through which Python code selects a device: torch.flagos.set_device and
# torch.flagos.device(...) (torch_fl._C), torch.accelerator.set_device_index and its
# device_index context (torch._C).
SELECTORS = {getattr(module, name) for module, name in [
    (torch_fl._C, "_set_device"), (torch_fl._C, "_exchange_device"), (torch._C, "_accelerator_setDeviceIndex"),
    (torch._C, "_accelerator_exchangeDevice"), (torch._C, "_accelerator_maybeExchangeDevice")]
    if hasattr(module, name)}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("qwen_image"))
    showcase.make_checkpoint(folder)
    return folder


@pytest.fixture(scope="module")
def references():
    """The CPU runs, shared by the cases that make the same calls."""
    return {}


@contextlib.contextmanager
def device_selections():
    """Records every call from Python code (ours, diffusers', transformers', accelerate's)
    that selects a device, without changing what it does."""
    calls: list = []

    def audit(frame, event, arg):
        if event == "c_call" and arg in SELECTORS:
            calls.append(f"{arg.__name__} from {frame.f_code.co_filename}:{frame.f_lineno}")

    previous = sys.getprofile()
    sys.setprofile(audit)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def launched_on(result) -> set:
    return {device for device, n in result.launches.items() if n}


def test_twelve_distinct_cases_each_with_a_reason():
    assert len(showcase.CASES) == 12 and len(set(NAMES)) == 12 and set(NAMES) == set(LAYOUTS)
    assert all(len(case.why) > 20 for case in showcase.CASES)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert showcase.main(["--why"]) == 0
    assert [line.split()[1] for line in out.getvalue().splitlines()] == NAMES


def test_tokenizer_is_the_pipelines_own_kind_and_loads_back(checkpoint):
    from diffusers import QwenImagePipeline
    from transformers import Qwen2Tokenizer

    pipe = QwenImagePipeline.from_pretrained(checkpoint)
    assert type(pipe.tokenizer) is Qwen2Tokenizer
    assert pipe.prompt_template_encode == showcase.TEMPLATE
    prompt = pipe.prompt_template_encode.format(showcase.PROMPT)
    ids = pipe.tokenizer(prompt).input_ids
    assert ids == showcase.make_tokenizer()(prompt).input_ids
    # The special tokens are single tokens, and the pipeline's drop index cuts exactly the system prompt.
    assert len(pipe.tokenizer("<|im_start|><|im_end|>").input_ids) == 2
    system = prompt[:prompt.index("user\n") + len("user\n")]
    assert len(pipe.tokenizer(system).input_ids) == pipe.prompt_template_encode_start_idx


@pytest.mark.parametrize("name", NAMES)
def test_case(name, checkpoint, references):
    """Strict mode, flagos:0 current, the same pipeline on the CPU; no Python code selects a device."""
    case = showcase.CASES[NAMES.index(name)]
    with device_selections() as selections:
        result = showcase.run_case(case, checkpoint, references)
    assert result.ok, result.failure()
    assert selections == []
    assert result.layout == LAYOUTS[name]
    assert launched_on(result) == {int(d) for d in re.findall(r"\d+", result.layout)}
    assert result.wrong_device == 0 and result.fallback_ops == 0
    assert torch.flagos.current_device() == 0
    if name == "current":
        assert result.set_device_calls == 0  # everything on the current device: no switch at all
    else:
        assert result.set_device_calls > 0  # each launch off flagos:0 switches to its device and back


def test_the_device_selection_audit_sees_a_selection():
    """Positive control of the audit above."""
    with device_selections() as selections:
        torch.flagos.set_device(0)
        with torch.flagos.device(1):
            pass
    assert [call.split()[0] for call in selections] == ["_set_device", "_exchange_device", "_set_device"]


def test_negative_control_guards_off(checkpoint, references, unguarded, hazards):
    """The guards off, a wrong-device launch giving NaN as on the 910C: every case that
    computes off flagos:0 fails; the one on flagos:0 alone still passes."""
    torch_fl.sim.set_mismatch_mode("nan")
    results = {case.name: showcase.run_case(case, checkpoint, references) for case in showcase.CASES}
    assert results["current"].ok, results["current"].failure()
    failing = [name for name, result in results.items() if not result.ok]
    assert failing == NAMES[1:]
    for name in failing:
        result = results[name]
        assert result.error or not result.finite or result.difference > result.case.atol, name
        assert torch.flagos.current_device() == 0
    # Where a launch ran on the wrong device, its output was NaN and the pipeline went on with it.
    assert results["split"].wrong_device > 0 and results["one-device"].wrong_device > 0


def test_negative_control_rejects_the_launch_in_error_mode(checkpoint, references, unguarded, hazards):
    torch_fl.sim.set_mismatch_mode("error")
    result = showcase.run_case(showcase.CASES[NAMES.index("split")], checkpoint, references)
    assert not result.ok
    assert result.wrong_device > 0 and "lives on device 3 but the launch runs on device 0" in result.error


def table_rows(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if re.match(r"\s*\d+\s", line)]


def run_example(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=env)


def test_example_prints_twelve_passing_rows():
    result = run_example()
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    rows = table_rows(result.stdout)
    assert [row.split()[1] for row in rows] == NAMES
    assert all(row.rstrip().endswith("OK") for row in rows), result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("OK: 12 of 12 cases match the CPU")
    assert len(result.stdout.splitlines()) <= 20  # one screen


def test_example_negative_control_and_one_case():
    result = run_example("--guards-off", "--case", "4")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    rows = table_rows(result.stdout)
    assert len(rows) == 1 and rows[0].split()[1] == "split" and "FAIL" in rows[0]
    assert "negative control" in result.stdout.splitlines()[-1]


def test_transformer_on_one_device():
    torch.manual_seed(0)
    transformer = showcase.make_transformer()
    g = torch.Generator().manual_seed(5)
    latents = torch.randn(1, 16, 16, generator=g)
    text, mask = torch.randn(1, 5, 16, generator=g), torch.ones(1, 5)
    kwargs = dict(timestep=torch.tensor([0.5]), img_shapes=[(1, 4, 4)], return_dict=False)
    with torch.no_grad():
        expected = transformer(hidden_states=latents, encoder_hidden_states=text, encoder_hidden_states_mask=mask,
                               **kwargs)[0]
        transformer.to("flagos:1")
        out = transformer(hidden_states=latents.to("flagos:1"), encoder_hidden_states=text.to("flagos:1"),
                          encoder_hidden_states_mask=mask.to("flagos:1"),
                          **{**kwargs, "timestep": kwargs["timestep"].to("flagos:1")})[0]
    assert out.device == torch.device("flagos:1")
    assert_close(out, expected, atol=1e-4)


def test_vae_encodes_and_decodes_on_a_non_current_device():
    """AutoencoderKLQwenImage (causal 3-d convolutions, its own RMS norm, upsampling) on flagos:1."""
    torch.manual_seed(0)
    vae = showcase.make_vae()
    video = torch.randn(1, 3, 1, 16, 16, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        latents = vae.encode(video).latent_dist.mode()
        expected = vae.decode(latents, return_dict=False)[0]
        vae.to("flagos:1")
        our_latents = vae.encode(video.to("flagos:1")).latent_dist.mode()
        image = vae.decode(our_latents, return_dict=False)[0]
    assert image.device == torch.device("flagos:1")
    assert_close(our_latents, latents, atol=1e-4, what="latents")
    assert_close(image, expected, atol=1e-4, what="image")
