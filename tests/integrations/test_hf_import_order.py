"""The Hugging Face integration holds whatever the import order: every
permutation of `import torch, diffusers, transformers, accelerate,
torch_fl`, with torch's backend autoload on and off, then a model loaded
with device_map="flagos", accelerate's device and memory queries, and
TrainingArguments' device. Each order needs a fresh interpreter: one
subprocess forks a child per order from a parent that has imported none of
them. Orders that load torch_fl at the same point run once: with autoload,
torch_fl loads with the first import of torch, diffusers, accelerate or
torch_fl (transformers imports torch only with its submodules); without it,
what matters is which libraries come before torch_fl.
FLAGOS_HF_INTEGRATION=0 is the negative control."""

from __future__ import annotations

import itertools
import json
import textwrap

import pytest

pytest.importorskip("accelerate")
pytest.importorskip("transformers")
pytest.importorskip("diffusers")

NAMES = ("torch", "diffusers", "transformers", "accelerate", "torch_fl")

# Runs each (first lines, environment) case in a forked child; prints the failures' tracebacks, then one JSON
# line of the failed cases.
DRIVER = textwrap.dedent(r'''
    import json, os, sys, traceback
    # Pulled in by the libraries whatever the order; imported once here to save each child the time.
    import numpy, safetensors, huggingface_hub, tokenizers, PIL.Image, yaml, psutil  # noqa

    CHECK = """
    import sys, torch, accelerate, transformers, diffusers
    import accelerate.utils, diffusers.models.model_loading_utils, transformers.integrations.accelerate
    assert accelerate.PartialState().device.type == "flagos", accelerate.PartialState().device
    for get_max_memory in (accelerate.utils.get_max_memory, diffusers.models.model_loading_utils.get_max_memory,
                           transformers.integrations.accelerate.get_max_memory):
        assert 0 in get_max_memory(), get_max_memory.__module__
    model = transformers.LlamaForCausalLM.from_pretrained(sys.argv[1], device_map="flagos")
    assert {p.device.type for p in model.parameters()} == {"flagos"}
    args = transformers.TrainingArguments(output_dir=sys.argv[2], report_to=[])
    assert args.device.type == "flagos", args.device
    """

    failures = []
    for first_lines, env in json.loads(sys.stdin.read()):
        pid = os.fork()
        if pid == 0:
            os.environ.update(env)
            status = 0
            try:
                exec(first_lines + "\n" + CHECK, {"__name__": "__check__"})
            except BaseException:
                print(f"--- {first_lines!r} {env}\n" + traceback.format_exc())
                status = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        _, status = os.waitpid(pid, 0)
        if status:
            failures.append([first_lines, env])
    print(json.dumps(failures))
''')


def run_cases(run, cases, tmp_path) -> tuple[list, str]:
    """Runs the (first lines, environment) cases through DRIVER; returns the failed ones and their tracebacks."""
    import transformers

    llama = tmp_path / "llama"
    transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1)).save_pretrained(llama)
    out = run(DRIVER, str(llama), str(tmp_path / "out"), stdin=json.dumps(cases))
    failures = json.loads(out.strip().splitlines()[-1])
    return failures, out


LOADS_TORCH = ("torch", "diffusers", "accelerate", "torch_fl")


def imports_until_torch_fl(order: tuple, autoload: bool) -> tuple:
    """The imports of `order` that run before torch_fl has loaded, up to the one that loads it."""
    if autoload:
        first = min(order.index(name) for name in LOADS_TORCH)
        return order[:first + 1]
    return tuple(name for name in order[:order.index("torch_fl") + 1] if name != "torch")


def test_every_import_order_places_on_flagos(fresh_python, tmp_path):
    cases = {}
    for order in itertools.permutations(NAMES):
        for autoload in ("1", "0"):
            start = "import " + ", ".join(imports_until_torch_fl(order, autoload == "1"))
            cases.setdefault((start, autoload), []).append(order)
    # Importing one of these first runs its module before torch (and so torch_fl) is imported.
    for start in ("from transformers import TrainingArguments", "from transformers import Trainer",
                  "from accelerate import Accelerator", "from diffusers import DiffusionPipeline"):
        cases[(start, "1")] = [start]
    assert sum(len(orders) for orders in cases.values()) == 2 * 120 + 4 and len(cases) == 8 + 16 + 4
    failures, log = run_cases(fresh_python, [[start, {"TORCH_DEVICE_BACKEND_AUTOLOAD": autoload}]
                                             for start, autoload in cases], tmp_path)
    failed = [order for start, env in failures for order in cases[(start, env["TORCH_DEVICE_BACKEND_AUTOLOAD"])]]
    assert not failed, f"{len(failed)} of 244 orders failed, e.g. {failed[:5]}\n{log[-3000:]}"


def test_without_the_integration_every_check_fails(fresh_python, tmp_path):
    cases = [["import torch_fl, accelerate, transformers, diffusers", {"FLAGOS_HF_INTEGRATION": "0"}],
             ["import accelerate, diffusers, transformers, torch_fl",
              {"FLAGOS_HF_INTEGRATION": "0", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}]]
    failures, log = run_cases(fresh_python, cases, tmp_path)
    assert failures == cases
    assert log.count("AssertionError: cpu") == 2  # accelerate's device: the first check


def test_training_arguments_imported_before_torch_take_flagos(fresh_python, tmp_path):
    # transformers.training_args imports torch (so torch_fl) from its own body, and is wrapped only once it
    # has finished: at the next import, which TrainingArguments' construction makes before choosing a device.
    out = fresh_python("from transformers import TrainingArguments\n"
                       f"print(TrainingArguments(output_dir={str(tmp_path)!r}, report_to=[]).device)")
    assert out.split()[-1] == "flagos:0", out
