"""`import torch` alone loads torch_fl (PyTorch's device-backend autoload,
the `torch.backends` entry point of setup.py), so that code and libraries
that never import torch_fl see the flagos device, in any import order. Each
case runs in a fresh interpreter; TORCH_DEVICE_BACKEND_AUTOLOAD=0 is the
negative control (and the way to turn it off)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytestmark = pytest.mark.skipif(
    not any(e.name == "torch_fl" for e in entry_points(group="torch.backends")),
    reason="torch_fl is not installed with its entry points (pip install --no-build-isolation -e .)")


def run(code: str, autoload: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="1" if autoload else "0")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(os.path.abspath(__file__)))


def test_import_torch_alone_knows_flagos():
    done = run("import torch; t = torch.randn(2, device='flagos:1'); print(t.device, torch.flagos.device_count())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "flagos:1"


def test_without_autoload_import_torch_does_not():
    done = run("import torch; torch.randn(2, device='flagos:1')", autoload=False)
    assert done.returncode != 0 and "flagos" in done.stderr


@pytest.mark.parametrize("order", [
    "import torch_fl, torch",
    "import torch, torch_fl",
    "import diffusers, torch_fl",
    "import transformers, torch_fl",
    "import accelerate, diffusers, transformers, torch_fl",
    "import torch_fl, accelerate, diffusers, transformers",
])
def test_every_import_order_sees_flagos_in_diffusers_device_maps(order):
    # diffusers fixes its supported device maps when it is imported.
    code = (f"{order}\nimport torch\nimport diffusers.pipelines.pipeline_utils as p\n"
            "assert 'flagos' in p.SUPPORTED_DEVICE_MAP, p.SUPPORTED_DEVICE_MAP\n"
            "x = torch.ones(3, device='flagos:2') + 1\nprint(x.device, x.cpu().tolist())")
    done = run(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "flagos:2 [2.0, 2.0, 2.0]"


def test_diffusers_imported_first_without_autoload_misses_flagos():
    # The negative control of the import-order cases: what users saw before.
    code = ("import diffusers.pipelines.pipeline_utils as p\nimport torch_fl\n"
            "print('flagos' in p.SUPPORTED_DEVICE_MAP)")
    done = run(code, autoload=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
