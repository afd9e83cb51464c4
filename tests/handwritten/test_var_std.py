"""var, std, var_mean and std_mean with any correction (csrc/handwritten/
var_std.cc) on flagos:2 while flagos:0 is current, against the CPU. An
integral correction is one launch; a non-integral one scales the
correction-0 result (a second launch, aclnnInplaceMuls)."""

import pytest
import torch
import torch_fl
from hw_util import assert_clean, assert_equal, needs_devices, on_device, rejected

pytestmark = needs_devices

X = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0))
OPS = {"var": ("aclnnVarCorrection", torch.var), "std": ("aclnnStd", torch.std),
       "var_mean": ("aclnnVarMean", torch.var_mean), "std_mean": ("aclnnStdMeanCorrection", torch.std_mean)}


def _results(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("correction", [None, 0, 1, 2, 0.5, 1.5, -0.25])
@pytest.mark.parametrize("dim,keepdim", [(None, False), ([1], False), ([0, 2], True), (-1, True)])
def test_corrections(name, correction, dim, keepdim):
    op, fn = OPS[name]
    kwargs = {"dim": dim, "keepdim": keepdim}
    if correction is not None:
        kwargs["correction"] = correction
    got = _results(fn(on_device(X), **kwargs))
    want = _results(fn(X, **kwargs))
    assert_clean(*got, ops=[op])
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert_equal(g, w)
    launches = torch_fl.sim.stats()["op_launches"]
    integral = correction is None or float(correction).is_integer()
    assert launches == ({op: 1} if integral else {op: 1, "aclnnInplaceMuls": 1}), launches


@pytest.mark.parametrize("name", ["var", "std"])
def test_correction_at_or_above_the_count(name):
    """N - correction <= 0: ATen divides by 0 (inf, or NaN for a zero sum)."""
    _, fn = OPS[name]
    x = torch.tensor([[1.0, 2.0], [3.0, 3.0]])
    for correction in (2, 2.5, 3.5):
        got = fn(on_device(x), dim=1, correction=correction)
        torch.testing.assert_close(got.cpu(), fn(x, dim=1, correction=correction), equal_nan=True)


def test_half_and_unbiased_forms():
    x = X.half()
    got = torch.var(on_device(x), dim=1, correction=0.5)
    assert got.dtype == torch.float16  # the correction-0 result is rounded to half before the scaling: 1 ulp
    torch.testing.assert_close(got.cpu(), torch.var(x, dim=1, correction=0.5), rtol=2e-3, atol=1e-3)
    assert_equal(torch.std(on_device(X), 1, unbiased=False), torch.std(X, 1, unbiased=False))
    assert_equal(on_device(X).var(), X.var())


def test_negative_control_var(unguarded):
    dx = on_device(X)
    with rejected():
        torch.var(dx, dim=1, correction=0.5)
