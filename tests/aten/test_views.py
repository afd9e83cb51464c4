"""Views of flagos tensors alias their base: no view op may run on the CPU
fallback, where a write through the view would land in a temporary copy."""

from __future__ import annotations

import os

import pytest
import torch
import torchgen
import yaml
from torchgen.model import FunctionSchema

import torch_fl  # noqa: F401

COMPOSITE = ("CompositeExplicitAutograd", "CompositeImplicitAutograd", "CompositeExplicitAutogradNonFunctional")


def aten_view_ops() -> list[str]:
    """Every ATen op whose result aliases an input and that writes nothing: the view ops."""
    path = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")
    with open(path) as handle:
        functions = yaml.safe_load(handle)
    views = []
    for function in functions:
        schema = FunctionSchema.parse(function["func"])
        aliases = [r for r in schema.returns if r.annotation is not None and not r.annotation.is_write]
        writes = any(a.annotation is not None and a.annotation.is_write for a in schema.arguments.flat_all)
        if aliases and not writes:
            views.append(str(schema.name))
    return views


def test_every_view_op_has_a_flagos_or_composite_kernel():
    views = aten_view_ops()
    assert len(views) > 80
    missing = [op for op in views
               if not any(torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", key)
                          for key in ("PrivateUse1", *COMPOSITE))]
    assert missing == [], f"these view ops would run on the CPU fallback: {missing}"


def test_unfold_writes_through():
    x = torch.arange(6.0, device="flagos:1")
    x.unfold(0, 2, 2).mul_(10)
    assert x.cpu().tolist() == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    assert torch_fl._C._fallback_counts() == {} or "unfold" not in torch_fl._C._fallback_counts()


def test_view_as_real_and_complex_alias():
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64, device="flagos:2")
    real = torch.view_as_real(z)
    assert real.device == z.device and real.untyped_storage().data_ptr() == z.untyped_storage().data_ptr()
    real[:, 1].mul_(-1)  # conjugate through the view
    assert z.cpu().tolist() == [1 - 2j, 3 + 4j]
    pairs = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="flagos:2")
    c = torch.view_as_complex(pairs)
    c.mul_(2)
    assert pairs.cpu().tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_views_run_under_strict_mode():
    torch_fl._C._set_strict(True)
    try:
        x = torch.arange(8.0, device="flagos:0")
        torch.view_as_complex(x.view(4, 2)).conj().resolve_conj()
        x.unfold(0, 4, 4).sum()
    finally:
        torch_fl._C._set_strict(False)


@pytest.mark.parametrize("op", ["_indices", "_values"])
def test_sparse_views_raise_a_clear_error(op):
    x = torch.ones(2, device="flagos:0")
    with pytest.raises(NotImplementedError, match="flagos tensors are strided"):
        getattr(torch.ops.aten, op)(x)
