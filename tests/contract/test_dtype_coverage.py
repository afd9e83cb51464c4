"""Dtype coverage that never strands a user (issue 12, item 7).

A kernel whose ACLNN operator rejects a dtype at phase 1 (the simulator
rejects exactly the dtypes CANN's docs exclude, with CANN's status 161002)
runs that call on the CPU instead: counted under "<op> [<dtype>]" and warned
once, like any CPU fallback, refused in strict mode. The dtypes the operator
takes never leave the device (negative controls below)."""

from __future__ import annotations

import warnings

import pytest
import torch

import torch_fl

DEV = "flagos:1"


@pytest.fixture(autouse=True)
def _fresh_counts():
    torch_fl._C._reset_fallback_counts()
    strict = torch_fl._C._strict()
    yield
    torch_fl._C._set_strict(strict)
    torch_fl._C._reset_fallback_counts()


def _counts():
    return dict(torch_fl._C._fallback_counts())


@pytest.mark.parametrize("dtype", [torch.uint16, torch.uint32, torch.uint64])
def test_random_on_a_dtype_the_operator_rejects_runs_on_the_cpu(dtype):
    x = torch.empty(64, dtype=dtype, device=DEV)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.random_(3, 9)
        x.random_(3, 9)
    assert x.device == torch.device(DEV) and x.dtype == dtype
    values = x.cpu().to(torch.int64)
    assert values.min() >= 3 and values.max() < 9
    key = f"aten::random_.from [{str(dtype).removeprefix('torch.').replace('uint', 'UInt')}]"
    assert _counts() == {key: 2}, _counts()
    messages = [str(w.message) for w in caught if "runs on the CPU" in str(w.message)]
    assert len(messages) == 1 and "aclnnInplaceRandom does not take" in messages[0], messages


def test_a_dtype_the_operator_takes_stays_on_the_device():
    """Negative control: the same op on int32 launches ACLNN and never falls back."""
    torch_fl.sim.reset_stats()
    x = torch.empty(64, dtype=torch.int32, device=DEV).random_(3, 9)
    assert _counts() == {}
    assert torch_fl.sim.stats()["op_launches"].get("aclnnInplaceRandom", 0) >= 1
    assert 3 <= int(x.min()) and int(x.max()) < 9


def test_strict_mode_refuses_the_dtype_fallback_with_canns_verdict():
    """The simulator still rejects what CANN rejects: strict mode shows its status."""
    torch_fl._C._set_strict(True)
    x = torch.empty(4, dtype=torch.uint32, device=DEV)
    with pytest.raises(RuntimeError, match=r"aclnnInplaceRandom does not take UInt32.*strict mode.*161002"):
        x.random_(0, 5)
    assert _counts() == {}


def test_complex_creation_random_fill_and_scalar_ops():
    torch.manual_seed(0)
    z = torch.randn(20000, dtype=torch.complex64, device=DEV)
    assert z.dtype == torch.complex64 and z.device == torch.device(DEV)
    parts = torch.view_as_real(z).cpu()
    # As on the CPU: each part has variance 1/2, the complex value variance 1.
    assert abs(parts.mean()) < 0.03 and abs(parts.var() - 0.5) < 0.03
    full = torch.full((3,), 1 + 2j, dtype=torch.complex64, device=DEV)
    assert torch.equal(full.cpu(), torch.full((3,), 1 + 2j, dtype=torch.complex64))
    a = torch.tensor([1 + 1j, 2 - 3j, -4j], dtype=torch.complex64)
    assert torch.allclose((a.to(DEV) / (1 + 2j)).cpu(), a / (1 + 2j))
    assert torch.allclose((a.to(DEV) * 2j).cpu(), a * 2j)


def test_complex_comparison():
    a = torch.tensor([1 + 1j, 2 - 3j, -4j, 5], dtype=torch.complex64)
    b = torch.tensor([1 + 1j, 2 + 3j, -4j, 5j], dtype=torch.complex64)
    assert torch.equal((a.to(DEV) == b.to(DEV)).cpu(), a == b)
    assert torch.equal((a.to(DEV) != b.to(DEV)).cpu(), a != b)
    assert torch.equal(a.to(DEV), a.conj().conj().to(DEV))
    assert not torch.equal(a.to(DEV), b.to(DEV))


def test_complex_half_maps_to_acl_complex32_and_runs():
    """ComplexHalf is CANN's ACL_COMPLEX32; operators that reject it run on the CPU."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = torch.zeros(4, dtype=torch.complex32, device=DEV)
        x = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex32)
        y = x.to(DEV)
        # (the CPU has no equal for ComplexHalf: compare the parts)
        assert torch.equal(torch.view_as_real(z.cpu()), torch.zeros(4, 2, dtype=torch.half))
        assert torch.equal(torch.view_as_real(y.cpu()), torch.view_as_real(x))
    assert any(key.endswith("[ComplexHalf]") for key in _counts()), _counts()


def test_nonzero_into_a_cpu_out_tensor_is_the_same_device_error():
    out = torch.empty(0, dtype=torch.long)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.nonzero(torch.ones(3, device=DEV), out=out)
    # The op itself works with an out= tensor on its device.
    ok = torch.empty(0, dtype=torch.long, device=DEV)
    torch.nonzero(torch.tensor([0.0, 1.0, 2.0], device=DEV), out=ok)
    assert ok.cpu().tolist() == [[1], [2]]


def test_a_dtype_without_an_acl_equivalent_is_a_clear_error():
    x = torch.ones(2, dtype=torch.float8_e4m3fn)
    with pytest.raises((RuntimeError, TypeError), match="flagos|Float8"):
        x.to(DEV).add_(1).cpu()


def test_more_dims_than_canns_limit_run_on_the_cpu():
    """CANN's operators take at most 8 dims; a 9-d call runs on the CPU (counted), an 8-d one does not."""
    x = torch.empty((1,) * 8 + (3,), device=DEV).uniform_(2.0, 3.0)
    assert _counts() == {"aten::uniform_ [9 dims]": 1}, _counts()
    values = x.cpu()
    assert x.device == torch.device(DEV) and 2.0 <= float(values.min()) and float(values.max()) < 3.0
    torch_fl._C._reset_fallback_counts()
    torch.empty((1,) * 7 + (3,), device=DEV).uniform_(2.0, 3.0)
    assert _counts() == {}


def test_argument_errors_are_phase_one_errors_at_the_call():
    """CANN's aclnnFlip checks its dims at phase 1: a bad dims list fails at the call,
    synchronously, and leaves nothing failing on the stream for a later synchronize."""
    for dtype in (torch.float32, torch.bfloat16, torch.complex128, torch.bool):
        x = torch.ones(2, 3, dtype=dtype, device=DEV)
        with pytest.raises(RuntimeError, match="multiple times"):
            x.flip(0, 1, 1)
        with pytest.raises((RuntimeError, IndexError), match="out of range"):
            x.flip(2)
        torch.flagos.synchronize(DEV)  # nothing was queued that fails
        assert torch.equal(x.flip(0, 1).cpu(), torch.ones(2, 3, dtype=dtype))


def test_a_run_time_failure_is_an_error_never_a_fallback():
    """Negative control: only a phase-1 rejection falls back. An int8 gather whose index
    is out of bounds passes phase 1 and fails in the kernel: the error surfaces at the
    synchronize, and nothing ran on the CPU in its place."""
    x = torch.arange(4, dtype=torch.int8, device=DEV)
    index = torch.tensor([7], device=DEV)
    with pytest.raises(RuntimeError, match="ACL_ERROR_RT_AICORE_EXCEPTION|out of|index"):
        torch.gather(x, 0, index)
        torch.flagos.synchronize(DEV)
    assert _counts() == {}


@pytest.mark.parametrize("case", ["batch_norm", "max_pool2d", "avg_pool2d"])
def test_handwritten_kernels_take_the_dtype_fallback(case):
    """aclnnBatchNorm, aclnnMaxPool2dWithIndices and aclnnAvgPool2d take no float64: that call runs on
    the CPU (counted); float32 stays on the device (negative control)."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, 4, dtype=torch.float64)

    def run(t):
        if case == "batch_norm":
            return torch.nn.functional.batch_norm(t, None, None, training=True)
        if case == "avg_pool2d":
            return torch.nn.functional.avg_pool2d(t, 2)
        return torch.nn.functional.max_pool2d(t, 2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run(x.to(DEV))
    assert out.device == torch.device(DEV) and out.dtype == torch.float64
    assert torch.allclose(out.cpu(), run(x))
    assert any(key.endswith("[Double]") for key in _counts()), _counts()
    torch_fl._C._reset_fallback_counts()
    out32 = run(x.float().to(DEV))
    assert torch.allclose(out32.cpu(), run(x.float()), atol=1e-5)
    assert _counts() == {}


def test_every_kernel_registration_has_the_dtype_fallback():
    """One mechanism for every kernel: each aten kernel registered for PrivateUse1, generated
    or handwritten, goes through flagos::with_dtype_fallback (a kernel added without it would
    strand users on a dtype its operator does not take). The copies convert on the CPU
    themselves (note_dtype_fallback) and are the listed exception."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "csrc"
    handles_itself = {"_copy_from", "_copy_from_and_resize", "conj_physical.out"}
    files = sorted((root / "handwritten").glob("*.cc")) + sorted((root / "generated").glob("kernels_*.cpp"))
    seen, missing = 0, []
    for path in files:
        text = path.read_text()
        for block in re.finditer(r"TORCH_LIBRARY_IMPL\(aten,\s*PrivateUse1,\s*m\)\s*\{(.*?)\n\}", text, re.S):
            for call in re.finditer(r'm\.impl\("([^"]+)",\s*([^;]*)\);', block.group(1)):
                seen += 1
                op, target = call.groups()
                if op in handles_itself:
                    continue
                if not re.match(rf'flagos::with_dtype_fallback<"{re.escape(op)}",', target):
                    missing.append(f"{path.name}: {op}")
    assert seen > 300, seen  # the scan found the registrations
    assert missing == [], missing


def test_a_fallback_result_lands_on_the_ops_device_when_a_number_comes_first():
    """1 - x is sub(<CPU 0-dim number>, x): when that call runs on the CPU (9 dims), its
    result still belongs on x's device, as the kernel would have put it."""
    x = torch.rand((1,) * 8 + (3,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = torch.sub(1, x.to(DEV))
    assert y.device == torch.device(DEV)
    assert torch.equal(y.cpu(), 1 - x)
    assert any(key.endswith("[9 dims]") for key in _counts()), _counts()


def test_a_copy_of_more_than_8_dims_stays_on_the_device_when_its_dims_merge():
    """aclnnInplaceCopy takes at most 8 dims; a 10-d strided copy whose dims merge to fewer
    runs as that copy, on the device (no fallback). Negative control: the values."""
    t = torch.rand(2, 1, 3, 1, 2, 1, 2, 1, 2, 2)
    torch_fl.sim.reset_stats()
    y = t.to(DEV).transpose(0, 9)
    assert torch.equal(y.cpu(), t.transpose(0, 9))
    assert torch.equal(y.contiguous().cpu(), t.transpose(0, 9).contiguous())
    assert torch_fl.sim.stats()["op_launches"].get("aclnnInplaceCopy", 0) >= 1
    assert _counts() == {}


def test_indices_that_do_not_broadcast_are_an_index_error():
    a = torch.ones(2, 3, 4)
    for device in ("cpu", DEV):
        with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \[0\], \[2\]"):
            a.to(device)[False, [0, 1], ...]


@pytest.mark.parametrize("op", ["tril", "gather", "index", "masked_fill"])
def test_complex_where_canns_operator_lists_none_runs_on_the_cpu(op):
    """CANN's aclnnTril, aclnnGather, aclnnIndex and aclnnInplaceMaskedFillScalar list no
    complex dtype: phase 1 rejects it at the call, the call runs on the CPU (counted).
    Negative control: float32 stays on the device."""
    def run(t):
        if op == "tril":
            return t.tril()
        if op == "gather":
            return torch.gather(t, 1, torch.tensor([[1, 0], [0, 2]], device=t.device))
        if op == "index":
            return t[torch.tensor([2, 0], device=t.device)]
        return t.masked_fill(torch.tensor([True, False, True], device=t.device), 7)

    z = torch.randn(3, 3, dtype=torch.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = run(z.to(DEV))
    assert out.device == torch.device(DEV) and torch.equal(out.cpu(), run(z))
    assert any(key.endswith("[ComplexFloat]") for key in _counts()), _counts()
    torch_fl._C._reset_fallback_counts()
    assert torch.equal(run(z.real.to(DEV)).cpu(), run(z.real))
    assert _counts() == {}


def test_an_out_of_bounds_cpu_index_is_an_index_error_at_the_call():
    """A CPU index is checked on the host; a device index fails in the kernel and reports at
    the synchronize (as on CUDA): an error either way, never a wrong value."""
    x = torch.arange(10, device=DEV)
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 0 with size 10"):
        x[torch.tensor([3, 10])]
    with pytest.raises(RuntimeError, match="out of bounds"):
        x[torch.tensor([3, 10], device=DEV)]
        torch.flagos.synchronize(DEV)
    assert x[torch.tensor([3, -1])].cpu().tolist() == [3, 9]
    # Any index into a dim of size 0 is out of bounds, wherever the index lives.
    empty = torch.empty(10, 0, device=DEV)
    with pytest.raises(IndexError, match="out of bounds for dimension with size 0"):
        empty[:, torch.tensor([0, 1], device=DEV)]
    assert empty[torch.tensor([1, 2], device=DEV)].shape == (2, 0)


@pytest.mark.parametrize("view", ["conj", "neg", "conj_neg"])
def test_copy_into_a_conjugate_or_negative_view(view):
    """A conjugate / negative view stores conj(v) / -v for its value v: a copy into it
    writes that, exactly as on the CPU (memory and value), also from a view of itself."""
    def make(t):
        if view == "conj":
            return t.conj()
        if view == "neg":
            return torch._neg_view(t)
        return torch._neg_view(t.conj())

    a = torch.tensor([1 + 2j, 3 - 4j, -5j], dtype=torch.complex64)
    src = torch.tensor([5 + 6j, -7j, 8], dtype=torch.complex64)
    on_cpu, on_dev = a.clone(), a.clone().to(DEV)
    make(on_cpu).copy_(src)
    target = make(on_dev)
    target.copy_(src.to(DEV))
    assert torch.equal(on_dev.cpu(), on_cpu)
    assert torch.equal(target.resolve_conj().resolve_neg().cpu(), src)
    # In place through two views of one memory (PyTorch's test_conj_view_with_shared_memory).
    on_cpu, on_dev = a.clone(), a.clone().to(DEV)
    b_cpu, b_dev = on_cpu.conj(), on_dev.conj()
    b_cpu.add_(on_cpu.conj())
    b_dev.add_(on_dev.conj())
    assert torch.equal(on_dev.cpu(), on_cpu)
