"""mm and bmm (yaml/ops/matmul.yaml) and matmul (csrc/handwritten/matmul.cc)
with their tensors on flagos:2 while flagos:0 is current."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, assert_equal, on_device, rejected


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mm(dtype):
    a, b = torch.randn(3, 4, dtype=dtype), torch.randn(4, 5, dtype=dtype)
    da, db = on_device(a, b)
    out = torch.mm(da, db)
    assert_clean(out, ops=["aclnnMm"])
    assert_equal(out, a @ b)


def test_mm_out():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    da, db = on_device(a, b)
    out = torch.empty(0, device=DEVICE)
    result = torch.mm(da, db, out=out)
    assert result is out
    assert_clean(out, ops=["aclnnMm"])
    assert_equal(out, a @ b)


def test_mm_empty_inner_dim_gives_zeros():
    da, db = on_device(torch.randn(3, 0), torch.randn(0, 2))
    out = torch.mm(da, db)
    assert_clean(out)
    assert_equal(out, torch.zeros(3, 2))


@pytest.mark.parametrize("shapes", [((0, 3), (3, 2)), ((3, 2), (2, 0)), ((0, 0), (0, 4)), ((2, 0, 3), (2, 3, 4)),
                                    ((0, 3, 4), (0, 4, 2)), ((2, 3, 0), (2, 0, 4))], ids=str)
def test_empty_operands_match_the_cpu(shapes):
    a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1])
    da, db = on_device(a, b)
    op = torch.mm if a.dim() == 2 else torch.bmm
    out = op(da, db)
    assert_clean(out)
    assert_equal(out, op(a, b))


def test_mm_dtype_error_is_the_cpus():
    a, b = torch.randn(3, 4), torch.randn(4, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError) as cpu:
        torch.mm(a, b)
    da, db = on_device(a, b)
    with pytest.raises(RuntimeError) as flagos:
        torch.mm(da, db)
    assert str(flagos.value).splitlines()[0] == str(cpu.value).splitlines()[0]
    assert torch_fl.sim.stats()["op_launches"] == {}


def test_mm_errors():
    da, db = on_device(torch.randn(3, 4), torch.randn(5, 2))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x2\)"):
        torch.mm(da, db)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(da, torch.randn(4, 2, device="flagos:1"))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(da, torch.randn(4, 2, dtype=torch.float64, device=DEVICE))


def test_bmm_and_bmm_out():
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    da, db = on_device(a, b)
    out = torch.bmm(da, db)
    preallocated = torch.empty(2, 3, 5, device=DEVICE)
    torch.bmm(da, db, out=preallocated)
    assert_clean(out, preallocated, ops=["aclnnBatchMatMul"])
    assert_equal(out, torch.bmm(a, b))
    assert_equal(preallocated, torch.bmm(a, b))


@pytest.mark.parametrize("shapes", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((2, 3, 4), (4, 5)),
                                    ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul_in_inference_mode_runs_the_fused_kernel(shapes):
    a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1])
    da, db = on_device(a, b)
    with torch.inference_mode():
        out = torch.matmul(da, db)
    assert_clean(out, ops=["aclnnMatmul"])
    assert set(torch_fl.sim.stats()["op_launches"]) == {"aclnnMatmul"}
    assert_equal(out, torch.matmul(a, b))


def test_matmul_out_in_inference_mode():
    a, b = torch.randn(2, 3, 4), torch.randn(4, 5)
    da, db = on_device(a, b)
    out = torch.empty(0, device=DEVICE)
    with torch.inference_mode():
        torch.matmul(da, db, out=out)
    assert_clean(out, ops=["aclnnMatmul"])
    assert_equal(out, torch.matmul(a, b))


def test_matmul_under_autograd_decomposes_into_mm_and_differentiates():
    a, b = torch.randn(2, 3, 4), torch.randn(4, 5)
    da, db = on_device(a, b)
    da.requires_grad_()
    out = torch.matmul(da, db)
    out.sum().backward()
    assert_clean(out, da.grad, ops=["aclnnMm"])
    assert "aclnnMatmul" not in torch_fl.sim.stats()["op_launches"]
    assert_equal(out.detach(), torch.matmul(a, b))
    assert_equal(da.grad, torch.ones(2, 3, 5) @ b.T)


def test_matmul_without_grad_takes_the_decomposition_too():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    da, db = on_device(a, b)
    out = torch.matmul(da, db)
    assert_clean(out, ops=["aclnnMm"])
    assert_equal(out, a @ b)


def test_negative_control_mm(unguarded):
    da, db = on_device(torch.randn(3, 4), torch.randn(4, 5))
    with rejected():
        torch.mm(da, db)


def test_negative_control_bmm(unguarded):
    da, db = on_device(torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    with rejected():
        torch.bmm(da, db)


def test_negative_control_matmul(unguarded):
    da, db = on_device(torch.randn(2, 3, 4), torch.randn(4, 5))
    with rejected(), torch.inference_mode():
        torch.matmul(da, db)
