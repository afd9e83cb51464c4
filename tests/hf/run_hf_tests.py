#!/usr/bin/env python
"""Run diffusers' and transformers' own test files on the CPU and on flagos, and compare.

    python tests/hf/run_hf_tests.py --diffusers SRC [--transformers SRC]
           [--families a,b] [-k EXPR] [--modes cpu,flagos,strict]
           [--cache DIR] [--jobs N] [--json PATH]

SRC is where the library's tests/ folder comes from: a checkout (a folder
with tests/), or a git directory (the fetch mirror, a bare clone) with
--diffusers-ref / --transformers-ref naming the commit. The project ships
none of these files (docs/hf-test-suites.md says where they come from); the
runner copies tests/ into --cache (default ~/.cache/torch_fl/hf-tests) and
runs the files of each family from there.

Each family's files run under pytest in a subprocess per mode, through the
device-generic runner's run_file (tests/pytorch/run_device_generic.py):
- cpu: DIFFUSERS_TEST_DEVICE / TRANSFORMERS_TEST_DEVICE=cpu, and torch's
  backend autoload off, so the baseline never imports torch_fl;
- flagos: the libraries' own device hooks: *_TEST_DEVICE=flagos,
  *_TEST_BACKEND=torch_fl, *_TEST_DEVICE_SPEC=a spec file this runner writes
  (seeding, empty_cache, device_count, memory statistics of torch.flagos);
- strict: flagos with FLAGOS_STRICT=1 (no CPU fallback for any op).
The copy of transformers' tests gets one edit (TOLERANCE_EDITS): its
eager-vs-SDPA test gives flagos the tolerances it gives npu, the hardware
flagos stands for, instead of those of a device it does not know.
A process that dies or hangs is a crash of the test it was running, counted,
and pytest resumes with the rest. The plugin records the flagos kernel
launches of each test: "touched" counts the flagos passes that launched at
least one kernel (the others passed without running anything on the device).

Everything runs offline (HF_HUB_OFFLINE=1, HF_HOME inside the cache). Hub
tokenizers the test files load by name are built locally into that HF_HOME
(LOCAL_TOKENIZERS); the rest of a hub download fails alike on every mode and
so never counts as a CPU pass.
Not collected by the project's pytest run (no test_ prefix).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
_spec = importlib.util.spec_from_file_location("run_device_generic", ROOT / "tests/pytorch/run_device_generic.py")
generic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generic)

# family -> (library, test files relative to the library's repository root)
FAMILIES = {
    "qwenimage-pipeline": ("diffusers", (
        "tests/pipelines/qwenimage/test_qwenimage.py",
        "tests/pipelines/qwenimage/test_qwenimage_img2img.py",
        "tests/pipelines/qwenimage/test_qwenimage_inpaint.py",
    )),
    "qwenimage-transformer": ("diffusers", ("tests/models/transformers/test_models_transformer_qwenimage.py",)),
    "autoencoder-kl": ("diffusers", ("tests/models/autoencoders/test_models_autoencoder_kl.py",)),
    "unet2d": ("diffusers", ("tests/models/unets/test_models_unet_2d.py",)),
    "llama": ("transformers", ("tests/models/llama/test_modeling_llama.py",)),
    "gpt2": ("transformers", ("tests/models/gpt2/test_modeling_gpt2.py",)),
    "bert": ("transformers", ("tests/models/bert/test_modeling_bert.py",)),
}
ENV_PREFIX = {"diffusers": "DIFFUSERS", "transformers": "TRANSFORMERS"}
# Besides tests/, what a library's test files import from its repository root
# (transformers' tests load custom classes from utils/test_module).
ROOT_EXTRAS = {"transformers": ("conftest.py", "utils/test_module")}
MODES = ("cpu", "flagos", "strict")
SPEC_FILE = "flagos_device_spec.py"

# Lines of a library's test files that key numerical tolerances on the device
# name and give a name they do not know the tightest ones; each edit gives
# flagos those of the hardware it stands for, the Ascend NPU (npu). Neither
# library's device spec carries tolerances. docs/hf-test-suites.md.
TOLERANCE_EDITS = {
    "transformers": (
        # _test_eager_matches_sdpa_inference: cpu and cuda read their own rows,
        # hpu/npu/tpu borrow cuda's, any other device gets atol=1e-7, rtol=1e-4
        # whatever the dtype (float16 outputs differ by ~1e-3 on every device).
        ("tests/test_modeling_common.py",
         'elif torch_device in ["hpu", "npu", "tpu"]:',
         'elif torch_device in ["hpu", "npu", "tpu", "flagos"]:'),
    ),
}

# The libraries read the spec with importlib.import_module(path without .py),
# so it sits in the folder pytest runs from (on sys.path).
DEVICE_SPEC = '''\
"""Device spec for diffusers' and transformers' testing_utils (written by torch_fl's tests/hf/run_hf_tests.py)."""
import torch
import torch_fl  # noqa: F401  - registers torch.flagos

DEVICE_NAME = "flagos"
MANUAL_SEED_FN = torch.flagos.manual_seed
EMPTY_CACHE_FN = torch.flagos.empty_cache
DEVICE_COUNT_FN = torch.flagos.device_count
SUPPORTS_TRAINING = True
RESET_PEAK_MEMORY_STATS_FN = torch.flagos.reset_peak_memory_stats
RESET_MAX_MEMORY_ALLOCATED_FN = torch.flagos.reset_max_memory_allocated
MAX_MEMORY_ALLOCATED_FN = torch.flagos.max_memory_allocated
MEMORY_ALLOCATED_FN = torch.flagos.memory_allocated
SYNCHRONIZE_FN = torch.flagos.synchronize
'''

# Hub tokenizers the selected test files load by name; built here as a
# byte-level BPE with the special tokens their pipelines use.
LOCAL_TOKENIZERS = {
    "hf-internal-testing/tiny-random-Qwen2VLForConditionalGeneration": {
        "class": "Qwen2Tokenizer",
        "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                    "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"],
        "eos": "<|im_end|>", "pad": "<|endoftext|>",
    },
}


def materialise(library: str, source: Path, ref: str | None, cache: Path) -> Path:
    """Copies the library's tests/ from `source` (a checkout, or a git dir at
    `ref`) to cache/<library>/tests; returns cache/<library>."""
    dest = cache / library
    if (dest / "tests").exists():
        shutil.rmtree(dest / "tests")
    dest.mkdir(parents=True, exist_ok=True)
    paths = ("tests",) + ROOT_EXTRAS.get(library, ())
    if (source / "tests").is_dir() and ref is None:
        for p in paths:
            if (source / p).is_dir():
                shutil.copytree(source / p, dest / p, dirs_exist_ok=True)
            elif (source / p).exists():
                shutil.copy(source / p, dest / p)
    else:
        tree = subprocess.run(["git", "--git-dir", str(source), "ls-tree", "--name-only", ref or "HEAD", *paths],
                              check=True, capture_output=True, text=True).stdout.split()
        archive = subprocess.run(["git", "--git-dir", str(source), "archive", ref or "HEAD", *tree],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    if library == "transformers":
        # test_pipeline_mixin.py and conftest.py import the repository's
        # src/transformers; point it at the installed package the tests run against.
        src = dest / "src" / "transformers"
        src.parent.mkdir(exist_ok=True)
        if src.is_symlink() or src.exists():
            src.unlink()
        src.symlink_to(Path(importlib.util.find_spec("transformers").origin).parent)
    for path, before, after in TOLERANCE_EDITS.get(library, ()):
        apply_edit(dest / path, before, after)
    (dest / SPEC_FILE).write_text(DEVICE_SPEC)
    return dest


def apply_edit(path: Path, before: str, after: str) -> bool:
    """Replaces the one line `before` of `path` by `after`; warns when the file
    has neither (another release of the library: the edit must be redone)."""
    text = path.read_text() if path.exists() else ""
    if after in text:
        return True
    if text.count(before) != 1:
        print(f"{path}: no single line {before!r}; flagos keeps the tolerances of a device the file does not "
              f"know (TOLERANCE_EDITS)", file=sys.stderr)
        return False
    path.write_text(text.replace(before, after))
    return True


def build_tokenizers(hf_home: Path) -> None:
    """Writes LOCAL_TOKENIZERS into hf_home's hub cache, as snapshots that
    from_pretrained(<hub id>) finds offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel

    alphabet = ByteLevel.alphabet()
    for repo_id, info in LOCAL_TOKENIZERS.items():
        vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
        for tok in info["special"]:
            vocab[tok] = len(vocab)
        repo_dir = hf_home / "hub" / ("models--" + repo_id.replace("/", "--"))
        snapshot = repo_dir / "snapshots" / "local"
        snapshot.mkdir(parents=True, exist_ok=True)
        (repo_dir / "refs").mkdir(exist_ok=True)
        (repo_dir / "refs" / "main").write_text("local")
        tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.add_special_tokens(info["special"])
        tok.save(str(snapshot / "tokenizer.json"))
        (snapshot / "vocab.json").write_text(json.dumps(vocab))
        (snapshot / "merges.txt").write_text("#version: 0.2\n")
        (snapshot / "tokenizer_config.json").write_text(json.dumps({
            "tokenizer_class": info["class"], "eos_token": info["eos"], "pad_token": info["pad"],
            "model_max_length": 32768, "additional_special_tokens": info["special"][1:],
        }))


def mode_env(library: str, mode: str, hf_home: Path) -> dict:
    prefix = ENV_PREFIX[library]
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(hf_home), "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false"}
    if mode == "cpu":
        env[f"{prefix}_TEST_DEVICE"] = "cpu"
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    else:
        env.update({f"{prefix}_TEST_DEVICE": "flagos", f"{prefix}_TEST_BACKEND": "torch_fl",
                    f"{prefix}_TEST_DEVICE_SPEC": SPEC_FILE})
        env["FLAGOS_STRICT"] = "1" if mode == "strict" else "0"
    return env


def read_log(path: Path) -> dict:
    """{nodeid: outcome record} of a plugin log (the first outcome of each test)."""
    results = {}
    for line in open(path):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a crash
        if rec["event"] == "end":
            results.setdefault(rec["nodeid"], rec)
    return results


def summarize_family(runs: dict, files: list[str]) -> dict:
    """One family's row: CPU passes, flagos and strict passes of those, crashes,
    touched (flagos passes of CPU passes that launched a flagos kernel), causes."""
    row = {}
    for mode in ("flagos", "strict"):
        per_file = {}
        for f in files:
            if (f, "cpu") in runs:
                per_file[(f, "cpu")] = runs[(f, "cpu")]
            if (f, mode) in runs:
                per_file[(f, "flagos")] = runs[(f, mode)]
        s = generic.summarize(per_file, files)
        if not s["total"]:
            continue
        t = s["total"]
        row["cpu_passed"] = t["cpu_passed"]
        row[f"{mode}_passed"] = t["flagos_passed_of_cpu_passed"]
        row[f"{mode}_ratio"] = t["ratio"]
        row[f"{mode}_crashes"] = t["crashes"]
        row[f"{mode}_causes"] = s["causes"]
        row[f"{mode}_crash_list"] = [c["nodeid"] for c in s["crashes"]]
        touched = accel_run = accel_passed = 0
        accel_causes: collections.Counter = collections.Counter()
        for f in files:
            cpu = {generic.generic_id(n): r["outcome"] for n, r in runs[(f, "cpu")]["results"].items()}
            for n, r in runs[(f, mode)]["results"].items():
                gid = generic.generic_id(n)
                if r["outcome"] == "passed" and cpu.get(gid) == "passed" and r.get("launches", 0) > 0:
                    touched += 1
                # Tests skipped on the CPU that ran on flagos: the libraries'
                # "requires an accelerator" ones. Not part of the ratio.
                if cpu.get(gid) == "skipped" and r["outcome"] != "skipped":
                    accel_run += 1
                    accel_passed += r["outcome"] == "passed"
                    if r["outcome"] != "passed":
                        accel_causes[generic.cause_of(r.get("message", ""), r.get("root"))] += 1
        row[f"{mode}_touched"] = touched
        row[f"{mode}_accelerator_only_run"] = accel_run
        row[f"{mode}_accelerator_only_passed"] = accel_passed
        row[f"{mode}_accelerator_only_causes"] = [{"count": k, "cause": c} for c, k in accel_causes.most_common()]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for lib in ENV_PREFIX:
        ap.add_argument(f"--{lib}", type=Path, default=None, help=f"{lib} checkout or git dir")
        ap.add_argument(f"--{lib}-ref", default=None, help="commit, when the source is a git dir")
    ap.add_argument("--families", default=None, help=f"default: all of {','.join(FAMILIES)} whose library is given")
    ap.add_argument("-k", dest="select", default=None, help="pytest -k expression for every file")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache/torch_fl/hf-tests")
    ap.add_argument("--jobs", type=int, default=1, help="pytest subprocesses at once")
    ap.add_argument("--stall", type=float, default=900.0, help="seconds without progress that count as a hang")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--no-copy", action="store_true", help="reuse the test files already in --cache")
    args = ap.parse_args(argv)

    sources = {lib: getattr(args, lib) for lib in ENV_PREFIX}
    families = (args.families.split(",") if args.families
                else [f for f, (lib, _) in FAMILIES.items() if sources[lib] or args.no_copy])
    modes = [m for m in args.modes.split(",") if m]
    cache = args.cache.resolve()
    hf_home = cache / "hf_home"
    build_tokenizers(hf_home)
    folders = {}
    for lib in sorted({FAMILIES[f][0] for f in families}):
        if args.no_copy:
            folders[lib] = cache / lib
        elif sources[lib] is None:
            print(f"--{lib} is needed for {', '.join(f for f in families if FAMILIES[f][0] == lib)}", file=sys.stderr)
            return 2
        else:
            folders[lib] = materialise(lib, sources[lib].resolve(), getattr(args, f"{lib}_ref"), cache)
    out_dir = cache / "logs"
    out_dir.mkdir(parents=True, exist_ok=True)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    import concurrent.futures

    work = [(fam, f, m) for fam in families for f in FAMILIES[fam][1] for m in modes]
    runs: dict[str, dict] = collections.defaultdict(dict)
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {}
        for fam, f, m in work:
            lib = FAMILIES[fam][0]
            if not (folders[lib] / f).exists():
                log(f"{f}: not in {folders[lib]}; skipped")
                continue
            log_name = f"{lib}.{f.replace('/', '.')}.{m}"
            fut = pool.submit(generic.run_file, folders[lib], f, "cpu" if m == "cpu" else "flagos",
                              out_dir, args.stall, log, args.select,
                              env_extra=mode_env(lib, m, hf_home), log_name=log_name)
            futures[fut] = (fam, f, m)
        for fut in concurrent.futures.as_completed(futures):
            fam, f, m = futures[fut]
            runs[fam][(f, m)] = res = fut.result()
            counts = collections.Counter(r["outcome"] for r in res["results"].values())
            log(f"{f} [{m}]: {dict(counts)} in {res['seconds']} s")
            for c in res["crashes"]:
                if c["nodeid"].endswith("<outside a test>"):  # collection failed: show why
                    log(f"{f} [{m}]: pytest stopped outside a test (returncode {c['returncode']}):\n"
                        + c["stderr"][-1500:])
    # A mode not run now comes from the logs of an earlier run with this --cache.
    for fam in families:
        lib = FAMILIES[fam][0]
        for f in FAMILIES[fam][1]:
            for m in MODES:
                path = out_dir / f"{lib}.{f.replace('/', '.')}.{m}.jsonl"
                if (f, m) not in runs[fam] and path.exists():
                    runs[fam][(f, m)] = {"results": read_log(path), "crashes": [], "seconds": 0}

    summary = {"families": {}, "seconds": round(time.monotonic() - t0, 1), "logs": str(out_dir),
               "select": args.select}
    for fam in families:
        files = [f for f in FAMILIES[fam][1] if (f, "cpu") in runs[fam]]
        summary["families"][fam] = summarize_family(runs[fam], files)
        summary["families"][fam]["files"] = files
    print(f"\n{'family':<22} {'cpu pass':>8} {'flagos':>7} {'ratio':>7} {'touched':>8} {'crash':>6} "
          f"{'strict':>7} {'ratio':>7} {'crash':>6} {'accel-only pass/run':>20}")
    for fam, row in summary["families"].items():
        if "cpu_passed" not in row:
            continue
        print(f"{fam:<22} {row['cpu_passed']:>8} {row.get('flagos_passed', '-'):>7} "
              f"{100 * row.get('flagos_ratio', 0):>6.1f}% {row.get('flagos_touched', '-'):>8} "
              f"{row.get('flagos_crashes', '-'):>6} {row.get('strict_passed', '-'):>7} "
              f"{100 * row.get('strict_ratio', 0):>6.1f}% {row.get('strict_crashes', '-'):>6} "
              f"{row.get('flagos_accelerator_only_passed', '-'):>11}/{row.get('flagos_accelerator_only_run', '-'):<8}")
    rows = [r for r in summary["families"].values() if "cpu_passed" in r]
    if len(rows) > 1:
        total = {k: sum(r.get(k, 0) for r in rows) for k in
                 ("cpu_passed", "flagos_passed", "flagos_touched", "flagos_crashes", "strict_passed",
                  "strict_crashes", "flagos_accelerator_only_passed", "flagos_accelerator_only_run")}
        summary["total"] = total
        print(f"{'total':<22} {total['cpu_passed']:>8} {total['flagos_passed']:>7} "
              f"{100 * total['flagos_passed'] / total['cpu_passed']:>6.1f}% {total['flagos_touched']:>8} "
              f"{total['flagos_crashes']:>6} {total['strict_passed']:>7} "
              f"{100 * total['strict_passed'] / total['cpu_passed']:>6.1f}% {total['strict_crashes']:>6} "
              f"{total['flagos_accelerator_only_passed']:>11}/{total['flagos_accelerator_only_run']:<8}")
    for fam, row in summary["families"].items():
        for mode in ("flagos", "strict"):
            causes = row.get(f"{mode}_causes")
            if causes:
                print(f"\n{fam} [{mode}]: failures of CPU-passing tests, by cause:")
                for c in causes:
                    print(f"{c['count']:>5}  {c['cause']}\n       e.g. {c['example']}")
            causes = row.get(f"{mode}_accelerator_only_causes")
            if causes:
                print(f"\n{fam} [{mode}]: failures of tests skipped on the CPU, by cause:")
                for c in causes:
                    print(f"{c['count']:>5}  {c['cause']}")
            for nodeid in row.get(f"{mode}_crash_list", []):
                print(f"CRASH [{mode}] {nodeid}")
    print(f"\n{summary['seconds']} s; per-test logs in {out_dir}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
