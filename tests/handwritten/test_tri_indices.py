"""tril_indices / triu_indices (csrc/handwritten/tri_indices.cc) on flagos:2
while flagos:0 is current, against the CPU: offsets, wide and tall shapes,
empty ones, dtypes; built on the device (tril_ / triu_ and nonzero), never
on the CPU fallback."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, needs_devices, strict

pytestmark = needs_devices


@pytest.mark.parametrize("fn", [torch.tril_indices, torch.triu_indices], ids=["tril", "triu"])
@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 6, -1), (6, 4, 2), (5, 5, -7), (5, 5, 9), (0, 3, 0),
                                            (3, 0, 1), (1, 1, 0)])
def test_as_on_the_cpu(fn, row, col, offset):
    torch_fl.sim.reset_stats()
    with strict():
        out = fn(row, col, offset, device=DEVICE)
    assert_clean(out)
    assert_equal(out, fn(row, col, offset))


def test_dtype_and_current_device():
    torch_fl.sim.reset_stats()
    out = torch.tril_indices(4, 3, dtype=torch.int32, device=DEVICE)
    assert_clean(out, ops=["aclnnNonzero"])
    assert_equal(out, torch.tril_indices(4, 3, dtype=torch.int32))
    torch.flagos.set_device(1)
    try:
        here = torch.triu_indices(3, 3, device="flagos")
        assert here.device == torch.device("flagos:1")
    finally:
        torch.flagos.set_device(0)


def test_checks_at_the_call():
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        torch.tril_indices(-1, 3, device=DEVICE)
    with pytest.raises(RuntimeError, match="col must be non-negative"):
        torch.triu_indices(3, -2, device=DEVICE)
