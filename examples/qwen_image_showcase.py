"""The seed's complete showcase at small scale: diffusers' QwenImagePipeline, twelve cases.

diffusers' own pipelines (QwenImagePipeline, and its img2img and inpaint
variants), their ``__call__`` unchanged, built from small configs with no
download: the Qwen-Image transformer, its VAE, the flow-matching scheduler,
a Qwen2.5-VL text encoder and a byte-level BPE tokenizer trained here with
the ``tokenizers`` library, wrapped as the ``Qwen2Tokenizer`` the pipeline
expects. The pipeline is saved with ``save_pretrained`` to a temporary
folder and every case loads it back with ``from_pretrained``, as users do.

Each case is a device layout or a mode users run. flagos:0 is the current
device throughout; nothing calls ``set_device`` and no Python context hook
wraps anything. Strict mode is on (an op without a flagos kernel raises
instead of running on the CPU), and each case is compared with the same
pipeline on the CPU (same seeds, a CPU ``torch.Generator``).

    python examples/qwen_image_showcase.py              # the twelve cases; exit 0 iff all pass
    python examples/qwen_image_showcase.py --case 4     # one case
    python examples/qwen_image_showcase.py --guards-off # negative control: the upstream behaviour

``--guards-off`` switches off the device guards the backend injects (a
diagnostic switch, for negative controls only) and lets the simulator judge
every launch: with ``--mismatch nan`` (the default) a launch on the wrong
device "succeeds" with NaN outputs, as the 910C did in the seed's runs;
with ``--mismatch error`` it is rejected. Every case that computes on a
device other than the current one must then fail; the script exits 0 only
if they all do.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import sys
import tempfile
import time
import warnings
from typing import Callable

import torch

import torch_fl

STEPS = 2
HEIGHT = WIDTH = 16  # pixels; the VAE's 2x and the transformer's 2x2 patches make 16 image tokens
PROMPT = "a red cat sitting on a blue mat"
PROMPTS = ["a small house by the sea", "two dogs running in the snow at night"]  # different lengths: padding
NEGATIVE = "blurry, dark"
SEED = 7
CURRENT = 0  # the current device: no code here or in the libraries it calls changes it

# Qwen-Image's prompt template (the pipeline's own): the tokenizer is trained on it, so
# the 34 tokens the pipeline drops after encoding are the system prompt.
TEMPLATE = ("<|im_start|>system\nDescribe the image by detailing the color, shape, size, texture, quantity, text, "
            "spatial relationships of the objects and background:<|im_end|>\n<|im_start|>user\n{}<|im_end|>\n"
            "<|im_start|>assistant\n")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def quiet() -> None:
    """One screen of output: no progress bars, no library chatter."""
    import diffusers
    import transformers

    diffusers.utils.logging.set_verbosity_error()
    diffusers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    # accelerate counts CUDA devices when it checks a max_memory map, and warns about flagos:N.
    logging.getLogger("accelerate").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)


# --- the checkpoint: tiny configs, saved as users' checkpoints are -------------------------


def make_tokenizer():
    """A byte-level BPE trained on the template and the prompts, as a Qwen2Tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    corpus = [TEMPLATE.format(p) for p in [PROMPT, NEGATIVE, *PROMPTS]]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=384, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=SPECIAL,
        show_progress=False))
    spec = json.loads(bpe.to_str())["model"]  # the trained vocabulary and merges, in rank order
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in spec["merges"]]
    tokenizer = Qwen2Tokenizer(vocab=spec["vocab"], merges=merges)
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL[1:]})
    return tokenizer


def make_text_encoder(vocab: int):
    """Qwen2.5-VL (its text model and a one-block vision tower), hidden size 16."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    return Qwen2_5_VLForConditionalGeneration(Qwen2_5_VLConfig(
        text_config=dict(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                         rope_parameters={"rope_type": "default", "mrope_section": [2, 1, 1], "rope_theta": 10000.0},
                         bos_token_id=0, eos_token_id=0, pad_token_id=0),
        vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=16,
                           fullatt_block_indexes=[0]),
        # no image in these prompts: the vision token ids only have to stay out of the vocabulary
        vision_start_token_id=vocab, vision_end_token_id=vocab + 1, image_token_id=vocab + 2,
        video_token_id=vocab + 3)).eval()


def make_transformer():
    """QwenImageTransformer2DModel: two blocks, 16 latent channels in (4 x 2x2 patches), text width 16."""
    from diffusers import QwenImageTransformer2DModel

    return QwenImageTransformer2DModel(
        patch_size=2, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=16, guidance_embeds=False, axes_dims_rope=(8, 4, 4)).eval()


def make_vae():
    """AutoencoderKLQwenImage: 4 latent channels, one 2x spatial downsampling."""
    from diffusers import AutoencoderKLQwenImage

    return AutoencoderKLQwenImage(base_dim=16, z_dim=4, dim_mult=[1, 2], num_res_blocks=1,
                                  temperal_downsample=[False], latents_mean=[0.1, -0.2, 0.0, 0.3],
                                  latents_std=[1.5, 2.0, 1.0, 2.5]).eval()


def make_checkpoint(folder: str) -> None:
    """QwenImagePipeline from small configs, fixed weights, saved to `folder`."""
    from diffusers import FlowMatchEulerDiscreteScheduler, QwenImagePipeline

    tokenizer = make_tokenizer()
    torch.manual_seed(0)
    text_encoder, transformer, vae = make_text_encoder(len(tokenizer)), make_transformer(), make_vae()
    # Qwen-Image's own scheduler settings: resolution-dependent shift, exponential time shift.
    scheduler = FlowMatchEulerDiscreteScheduler(
        base_image_seq_len=256, base_shift=0.5, max_image_seq_len=8192, max_shift=0.9, shift=1.0,
        shift_terminal=0.02, time_shift_type="exponential", use_dynamic_shifting=True)
    QwenImagePipeline(scheduler=scheduler, vae=vae, text_encoder=text_encoder, tokenizer=tokenizer,
                      transformer=transformer).save_pretrained(folder)


# --- layouts: how users place a pipeline on devices -----------------------------------------

# The transformer split in two by accelerate's device_map (integer devices are the current
# accelerator's, flagos): its embeddings and first block on flagos:1, the rest on flagos:2.
TRANSFORMER_SPLIT = {"pos_embed": 1, "time_text_embed": 1, "txt_norm": 1, "img_in": 1, "txt_in": 1,
                     "transformer_blocks.0": 1, "transformer_blocks.1": 2, "norm_out": 2, "proj_out": 2}


def balanced(cls, folder, dtype):
    """diffusers' own multi-device placement: one component per device, accelerate's hooks
    move tensors between them. accelerate detects only the accelerators it names, so the
    devices come from max_memory (its integer keys are flagos devices)."""
    return cls.from_pretrained(folder, dtype=dtype, device_map="balanced",
                               max_memory={1: "1GB", 2: "1GB", 3: "1GB"})


def split(cls, folder, dtype):
    """The seed's layout: the transformer over flagos:1 and flagos:2, the text encoder and
    the VAE (and so the latents and the scheduler) on flagos:3."""
    from diffusers import AutoencoderKLQwenImage, QwenImageTransformer2DModel
    from transformers import Qwen2_5_VLForConditionalGeneration

    transformer = QwenImageTransformer2DModel.from_pretrained(folder, subfolder="transformer", dtype=dtype,
                                                              device_map=TRANSFORMER_SPLIT)
    text_encoder = Qwen2_5_VLForConditionalGeneration.from_pretrained(folder, subfolder="text_encoder",
                                                                      dtype=dtype, device_map="flagos:3")
    vae = AutoencoderKLQwenImage.from_pretrained(folder, subfolder="vae", dtype=dtype, device_map="flagos:3")
    return cls.from_pretrained(folder, transformer=transformer, text_encoder=text_encoder, vae=vae,
                               dtype=dtype)


def model_offload(cls, folder, dtype):
    pipe = cls.from_pretrained(folder, dtype=dtype)
    pipe.enable_model_cpu_offload(device="flagos:1")
    return pipe


def sequential_offload(cls, folder, dtype):
    pipe = cls.from_pretrained(folder, dtype=dtype)
    pipe.enable_sequential_cpu_offload(device="flagos:2")
    return pipe


# --- the cases ---------------------------------------------------------------------------


def source_image(height: int = HEIGHT, width: int = WIDTH):
    from PIL import Image

    g = torch.Generator().manual_seed(3)
    pixels = (torch.rand(height, width, 3, generator=g) * 255).to(torch.uint8).numpy()
    return Image.fromarray(pixels)


def mask_image(height: int = HEIGHT, width: int = WIDTH):
    from PIL import Image

    mask = torch.zeros(height, width, dtype=torch.uint8)
    mask[height // 4: 3 * height // 4, width // 4: 3 * width // 4] = 255
    return Image.fromarray(mask.numpy())  # 8-bit, one channel: mode "L"


@dataclasses.dataclass
class Case:
    name: str
    why: str  # why users' runs need this case
    place: Callable  # (pipeline class, folder, dtype) -> the pipeline on flagos, as users place it
    pipeline: str = "QwenImagePipeline"
    dtype: torch.dtype = torch.float32
    calls: tuple = ({},)  # each pipeline call's keyword arguments, over run_pipeline's defaults
    atol: float = 1e-4  # on images in [0, 1]


def whole(device: str) -> Callable:
    return lambda cls, folder, dtype: cls.from_pretrained(folder, dtype=dtype).to(device)


CASES = [
    Case("current", "pipe.to('flagos'): the plain setup, all on the current device; expects no set-device call",
         whole("flagos")),
    Case("one-device", "pipe.to('flagos:3'): every op on a device that is not the current one (the seed's bug)",
         whole("flagos:3")),
    Case("balanced", "device_map='balanced': diffusers puts each component on its own device", balanced),
    Case("split", "transformer split over two devices by a device_map, scheduler on a third (the seed's layout)",
         split),
    Case("model-offload", "enable_model_cpu_offload: each model moves from the CPU to flagos:1 when it runs",
         model_offload),
    Case("seq-offload", "enable_sequential_cpu_offload: each layer's weights come to flagos:2 for its call",
         sequential_offload),
    Case("true-cfg", "true_cfg_scale > 1 with a negative prompt: two prompt encodings, two passes per step",
         split, calls=({"negative_prompt": NEGATIVE, "true_cfg_scale": 4.0},)),
    Case("batch", "two prompts of different lengths x num_images_per_prompt=2: padding masks, batch of 4",
         balanced, calls=({"prompt": PROMPTS, "num_images_per_prompt": 2},)),
    Case("resolutions", "one pipeline at 16x16, then at 32x16: new shapes, RoPE tables and shift on the devices",
         split, calls=({}, {"height": 32, "width": 16})),
    Case("bf16", "dtype=torch.bfloat16, the dtype checkpoints run in", balanced, dtype=torch.bfloat16,
         atol=1e-2),
    Case("img2img", "QwenImageImg2ImgPipeline: the VAE encodes the input image, strength skips steps", split,
         pipeline="QwenImageImg2ImgPipeline",
         calls=({"image": source_image(), "strength": 0.5, "num_inference_steps": 4},)),
    Case("inpaint", "QwenImageInpaintPipeline: masked-image latents blended into every step", balanced,
         pipeline="QwenImageInpaintPipeline",
         calls=({"image": source_image(), "mask_image": mask_image(), "strength": 0.8, "num_inference_steps": 3},)),
]


def run_pipeline(pipe, case: Case) -> list[torch.Tensor]:
    images = []
    for overrides in case.calls:
        kwargs = dict(prompt=PROMPT, height=HEIGHT, width=WIDTH, num_inference_steps=STEPS, output_type="pt",
                      generator=torch.Generator().manual_seed(SEED))
        kwargs.update(overrides)
        images.append(pipe(**kwargs).images)
    return images


def pipeline_class(name: str):
    import diffusers

    return getattr(diffusers, name)


def placement(module) -> str:
    """Where a component computes: its parameters' flagos devices ("1+2"), or for offloaded
    weights the device accelerate's hooks run it on ("cpu>1")."""
    devices = sorted({p.device.index for p in module.parameters() if p.device.type == "flagos"})
    if devices:
        return "+".join(map(str, devices))
    hooked = set()
    for submodule in module.modules():
        device = getattr(getattr(submodule, "_hf_hook", None), "execution_device", None)
        if device is not None:
            hooked.add(torch.device(device).index)
    return "cpu>" + "+".join(map(str, sorted(hooked))) if hooked else "cpu"


def layout(pipe) -> str:
    """E text encoder, T transformer, V VAE, grouped by placement: "E,V:3 T:1+2"."""
    groups: dict = {}
    for letter, name in (("E", "text_encoder"), ("T", "transformer"), ("V", "vae")):
        groups.setdefault(placement(getattr(pipe, name)), []).append(letter)
    return " ".join(f"{','.join(letters)}:{where}" for where, letters in groups.items())


@dataclasses.dataclass
class Result:
    case: Case
    layout: str
    launches: dict
    set_device_calls: int
    wrong_device: int  # launches the simulator rejected or corrupted (tensors not on the launch device)
    fallback_ops: int
    difference: float
    finite: bool
    current_after: int
    error: str = ""
    images_checked: bool = True  # False when the case raised before its images were made

    @property
    def ok(self) -> bool:
        return (not self.error and self.finite and self.difference <= self.case.atol and self.fallback_ops == 0
                and self.wrong_device == 0 and self.current_after == CURRENT)

    def failure(self, note: str = "") -> str:
        """Why the case failed; `note` stands for its error, spelled out under the table."""
        reasons = [f"raised {note}" if note else self.error] if self.error else []
        if self.images_checked and not self.finite:
            reasons.append("NaN in the image")
        elif self.images_checked and not self.difference <= self.case.atol:
            reasons.append(f"differs from the CPU by more than {self.case.atol:g}")
        if self.wrong_device:
            reasons.append("launches on the wrong device")
        if self.fallback_ops:
            reasons.append("ops on the CPU fallback")
        if self.current_after != CURRENT:
            reasons.append(f"flagos:{self.current_after} current after")
        return ", ".join(reasons)


def short_error(exc: BaseException) -> str:
    """The gist of an error: the simulator's diagnosis when there is one."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "failed with ACL error" in message:  # "<call> failed with ACL error N: <simulator's reason>"
        message = message.split("failed with ACL error", 1)[1].split(": ", 1)[-1]
    return f"{type(exc).__name__}: {message}"


def settle() -> str:
    """Reports (and clears) failed work still queued on any device's stream."""
    failures = []
    for device in range(torch.flagos.device_count()):
        try:
            torch.flagos.synchronize(device)
        except RuntimeError as error:
            failures.append(short_error(error))
    return failures[0] if failures else ""


def run_case(case: Case, folder: str, references: dict) -> Result:
    """The case on flagos in strict mode, against the same pipeline on the CPU."""
    cls = pipeline_class(case.pipeline)
    key = (case.pipeline, case.dtype, repr(case.calls))
    if key not in references:
        cpu = cls.from_pretrained(folder, dtype=case.dtype)
        cpu.set_progress_bar_config(disable=True)
        references[key] = [image.float() for image in run_pipeline(cpu, case)]
    expected = references[key]

    torch_fl.sim.reset_stats()
    error, images, where = "", [], "?"
    strict = torch_fl._C._strict()
    torch_fl._C._set_strict(True)
    try:
        pipe = case.place(cls, folder, case.dtype)
        pipe.set_progress_bar_config(disable=True)
        where = layout(pipe)
        images = [image.float().cpu() for image in run_pipeline(pipe, case)]
    except Exception as exc:  # a failing case is a row of the table, never the end of the run
        error = short_error(exc)
    finally:
        torch_fl._C._set_strict(strict)
    stats = torch_fl.sim.stats()
    error = error or settle()  # after reading the counters: its synchronizations are not the case's
    finite = bool(images) and all(bool(torch.isfinite(image).all()) for image in images)
    difference = (max((a - b).abs().max().item() for a, b in zip(images, expected)) if finite and
                  len(images) == len(expected) else float("nan"))
    return Result(case, where, stats["launches"], stats["set_device_calls"],
                  stats["rejected_launches"] + stats["mismatched_launches"], sum(stats["fallback_ops"].values()),
                  difference, finite, torch.flagos.current_device(), error, images_checked=bool(images))


def table(results: list[Result]) -> list[str]:
    """One row per case; errors, which are long, as notes under the table, one per distinct error."""
    notes: dict = {}  # error -> names of the cases that raised it
    for r in results:
        if r.error:
            notes.setdefault(r.error, []).append(r.case.name)
    letters = {error: f"[{chr(ord('a') + i)}]" for i, error in enumerate(notes)}
    devices = range(torch.flagos.device_count())
    launches_title = "launches " + "/".join(map(str, devices))
    header = (f"{'#':>2}  {'case':<13} {'layout':<14} {launches_title:<19} {'set-dev':>7} {'wrong-dev':>9} "
              f"{'fallback':>8} {'max|flagos-cpu|':>15}  OK")
    lines = [header, "-" * len(header)]
    for r in results:
        launches = "/".join(str(r.launches.get(d, 0)) for d in devices)
        difference = "-" if r.difference != r.difference else f"{r.difference:.1e}"
        verdict = "OK" if r.ok else "FAIL: " + r.failure(letters.get(r.error, ""))
        lines.append(f"{CASES.index(r.case) + 1:>2}  {r.case.name:<13} {r.layout:<14} {launches:<19} "
                     f"{r.set_device_calls:>7} {r.wrong_device:>9} {r.fallback_ops:>8} {difference:>15}  {verdict}")
    for error, names in notes.items():
        lines.append(f"{letters[error]} {', '.join(names)}: {error}"[:160])
    return lines


def off_current(result: Result) -> bool:
    """The case places a component on a device other than the current one, or launched there."""
    placed = set(re.findall(r"\d+", result.layout))
    return placed != {str(CURRENT)} or any(n for device, n in result.launches.items() if device != CURRENT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", type=int, metavar="N", help=f"run case N only (1..{len(CASES)})")
    parser.add_argument("--guards-off", action="store_true",
                        help="negative control: the injected device guards off; the cases off flagos:0 must fail")
    parser.add_argument("--mismatch", choices=["nan", "error"], default="nan",
                        help="with --guards-off: a launch on the wrong device gives NaN (the 910C) or is rejected")
    parser.add_argument("--why", action="store_true", help="print why each case is there, and exit")
    args = parser.parse_args(argv)
    if args.case is not None and not 1 <= args.case <= len(CASES):
        parser.error(f"--case must be 1..{len(CASES)}")

    if args.why:
        for index, case in enumerate(CASES, 1):
            print(f"{index:>2}  {case.name:<13} {case.why}")
        return 0
    quiet()
    if torch.flagos.current_device() != CURRENT:
        print(f"FAILED: flagos:{CURRENT} must be current at the start, not flagos:{torch.flagos.current_device()}")
        return 1
    if args.guards_off:
        torch_fl._C._set_guards_enabled(False)
        torch_fl._C._set_device_check(False)  # the simulator alone judges each launch, as the hardware does
        torch_fl.sim.set_mismatch_mode(args.mismatch)

    cases = [CASES[args.case - 1]] if args.case else CASES
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="qwen_image_") as folder:
        make_checkpoint(folder)
        references: dict = {}
        results = [run_case(case, folder, references) for case in cases]
    seconds = time.perf_counter() - start

    guards = f"guards OFF, wrong-device launches give {args.mismatch}" if args.guards_off else "guards on"
    print(f"diffusers' Qwen-Image pipelines on flagos, {STEPS} steps at {HEIGHT}x{WIDTH} unless the case says; "
          f"strict mode; flagos:{CURRENT} current; {guards}")
    print("layout: E text encoder, T transformer, V VAE on flagos:N (1+2: split; cpu>N: offloaded, runs on N)")
    print("\n".join(table(results)))
    if not args.guards_off:
        passed = sum(r.ok for r in results)
        verdict = passed == len(results)
        print(f"{'OK' if verdict else 'FAILED'}: {passed} of {len(results)} cases match the CPU, finite, no op on "
              f"the CPU fallback, flagos:{CURRENT} still current ({seconds:.0f} s)")
        return 0 if verdict else 1
    # The negative control: every case that computes off the current device must fail.
    away = [r for r in results if off_current(r)]
    failed = [r for r in away if not r.ok]
    verdict = bool(away) and len(failed) == len(away)
    print(f"{'OK' if verdict else 'FAILED'}: negative control: with the guards off, {len(failed)} of {len(away)} "
          f"cases off flagos:{CURRENT} fail; {sum(r.ok for r in results if r not in away)} of "
          f"{len(results) - len(away)} on flagos:{CURRENT} alone pass ({seconds:.0f} s)")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
