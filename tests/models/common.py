"""Helpers shared by the model tests."""

from __future__ import annotations

import torch


def to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, (list, tuple)):
        return type(value)(to_cpu(v) for v in value)
    return value


def assert_close(actual, expected, atol=1e-4, rtol=1e-4, what=""):
    torch.testing.assert_close(to_cpu(actual), to_cpu(expected), atol=atol, rtol=rtol,
                               msg=lambda m: f"{what}: {m}" if what else m)


def dispatch(model, device_map: dict[str, str]):
    """accelerate's dispatch_model: each submodule on its device, inputs moved by forward pre-hooks."""
    from accelerate import dispatch_model

    return dispatch_model(model, device_map=device_map)


def devices_of(model) -> set[str]:
    return {str(p.device) for p in model.parameters()}
