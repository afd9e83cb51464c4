"""The empty-tensor policy of the generated wrappers (docs/codegen.md, "The
generated wrapper"): no launch when every tensor the launch writes is
empty, after the checks and the allocation, so results and errors are those
of the CPU.

Each case runs once with an empty result (no launch of its operator) and
once with a non-empty one (exactly one launch: the negative control, which
shows the counter sees the launch the empty case skips).

Needs the built backend (`import torch_fl`); skipped cleanly without it.
"""

from __future__ import annotations

import pytest

import torch

try:
    import torch_fl
except (ImportError, OSError) as error:  # the backend is not built
    pytest.skip(f"torch_fl cannot be imported: {error}", allow_module_level=True)

DEVICE = "flagos:0"


def _add(x):
    return x + x


def _add_(x):
    return x.add_(x)


def _add_out(x):
    return torch.add(x, x, out=torch.empty(0, device=x.device))


def _relu(x):
    return torch.relu(x)


def _max_dim(x):
    return torch.max(x, dim=1)


def _zeros(x):
    return torch.zeros(x.shape, device=x.device)


def _upsample(x):
    return torch.nn.functional.interpolate(x.reshape(x.shape[0], 1, 1, x.shape[1]), scale_factor=2.0, mode="nearest")


# (the op, its operator, the input size of the empty case, of the non-empty one)
CASES = {
    "add.Tensor (structured)": (_add, "aclnnAdd", (0, 3), (2, 3)),
    "add_.Tensor (in place)": (_add_, "aclnnInplaceAdd", (0, 3), (2, 3)),
    "add.out (out=)": (_add_out, "aclnnAdd", (0, 3), (2, 3)),
    "relu (shape unary)": (_relu, "aclnnRelu", (0, 3), (2, 3)),
    "max.dim (two outputs)": (_max_dim, "aclnnMaxDim", (0, 3), (2, 3)),
    "zeros (factory)": (_zeros, "aclnnInplaceZero", (0, 3), (2, 3)),
    "upsample_nearest2d (alternate launch)": (_upsample, "aclnnUpsampleNearest2dV2", (0, 3), (2, 3)),
}


def _launches(op, operator, size):
    x = torch.arange(size[0] * size[1], dtype=torch.float32).reshape(size)
    expected = op(x.clone())
    torch_fl.sim.reset_stats()
    result = op(x.to(DEVICE))
    torch.flagos.synchronize(0)
    launches = torch_fl.sim.stats()["op_launches"].get(operator, 0)
    results = result if isinstance(result, tuple) else (result,)
    for got, want in zip(results, expected if isinstance(expected, tuple) else (expected,)):
        assert got.device == torch.device(DEVICE)
        torch.testing.assert_close(got.cpu(), want)
    return launches


@pytest.mark.parametrize("name", CASES)
def test_an_empty_result_makes_no_launch(name):
    op, operator, empty, _ = CASES[name]
    assert _launches(op, operator, empty) == 0


@pytest.mark.parametrize("name", CASES)
def test_a_non_empty_result_launches(name):
    """The negative control: the same op with elements launches its operator once."""
    op, operator, _, full = CASES[name]
    assert _launches(op, operator, full) == 1


def test_a_reduction_of_an_empty_input_still_launches():
    """The rule looks at what the launch writes: the sum of no element is a 0-dim 0, written by the launch."""
    x = torch.empty(0, 3, device=DEVICE)
    torch_fl.sim.reset_stats()
    total = x.sum()
    assert torch_fl.sim.stats()["op_launches"].get("aclnnReduceSum", 0) == 1
    assert total.cpu().item() == 0.0


def test_an_empty_call_keeps_its_errors():
    """The checks run before the rule: an empty out= tensor of a dtype the result cannot be cast to is refused."""
    x = torch.empty(0, 3)
    with pytest.raises(RuntimeError) as cpu_error:
        torch.add(x, x, out=torch.empty(0, dtype=torch.long))
    with pytest.raises(RuntimeError) as flagos_error:
        torch.add(x.to(DEVICE), x.to(DEVICE), out=torch.empty(0, dtype=torch.long, device=DEVICE))
    assert str(flagos_error.value) == str(cpu_error.value)
