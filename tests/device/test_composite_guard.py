"""Composite ops make their device current once (yaml/composite.yaml lists them;
csrc/aten/composite_guard.cc, flagos::CompositeGuard): 2 aclrtSetDevice calls for the whole op when its
tensors are on a non-current device, 0 on the current one, and the values of
the CPU. Negative control: with the composite guards off
(`_set_composite_guards_enabled(False)`) each inner launch pays its own
switch and restore, so the same call makes more than 2."""

import pytest
import torch
import torch.nn.functional as F

torch_fl = pytest.importorskip("torch_fl")
C = torch_fl._C

CURRENT, OTHER = 0, 2


@pytest.fixture(autouse=True)
def _composite_guards_back_on():
    yield
    C._set_composite_guards_enabled(True)


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def _to(values, device):
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def _rms_norm(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, eps=1e-5)


def _linear(x, w, b):
    return F.linear(x, w, b)


def _layer_norm_forward(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def _sdpa_math(q, k, v):
    return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, None, 0.0, False)[0]


def _sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


# name -> (function of the inputs, the inputs on the CPU)
FORWARD = {
    "rms_norm": (_rms_norm, [_rand(4, 8), _rand(8, seed=1)]),
    "linear": (_linear, [_rand(4, 8), _rand(3, 8, seed=1), _rand(3, seed=2)]),
    # A non-contiguous 3-d input decomposes into bmm and add_: two launches.
    "linear_3d": (_linear, [_rand(4, 2, 8).transpose(0, 1), _rand(3, 8, seed=1), _rand(3, seed=2)]),
    "layer_norm": (_layer_norm_forward, [_rand(4, 8), _rand(8, seed=1), _rand(8, seed=2)]),
    "_scaled_dot_product_attention_math": (_sdpa_math, [_rand(1, 2, 4, 8, seed=s) for s in range(3)]),
    "scaled_dot_product_attention": (_sdpa, [_rand(1, 2, 4, 8, seed=s) for s in range(3)]),
}


def _run_forward(name, device, current, grad=False):
    fn, cpu_inputs = FORWARD[name]
    inputs = [t.to(device).requires_grad_(grad) for t in cpu_inputs]
    torch.flagos.set_device(current)
    torch_fl.sim.reset_stats()
    out = fn(*inputs)
    stats = torch_fl.sim.stats()
    return out, inputs, stats


@pytest.mark.parametrize("name", sorted(FORWARD))
@pytest.mark.parametrize("grad", [False, True], ids=["no-grad", "requires-grad"])
def test_composite_makes_two_set_device_calls_on_other_device(name, grad):
    fn, cpu_inputs = FORWARD[name]
    expected = fn(*cpu_inputs)
    out, _, stats = _run_forward(name, f"flagos:{OTHER}", CURRENT, grad)
    assert stats["set_device_calls"] == 2, f"{name}: {stats['set_device_calls']} set-device calls"
    assert stats["launches"][OTHER] >= 1 and stats["launches"][CURRENT] == 0, stats["launches"]
    assert stats["rejected_launches"] == 0 and not stats["fallback_ops"], stats
    assert torch.flagos.current_device() == CURRENT
    assert out.device == torch.device("flagos", OTHER)
    torch.testing.assert_close(out.detach().cpu(), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_composite_makes_no_set_device_call_on_current_device(name):
    _, _, stats = _run_forward(name, f"flagos:{CURRENT}", CURRENT)
    assert stats["set_device_calls"] == 0
    assert stats["launches"][CURRENT] >= 1


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_composite_inference_mode_makes_two_set_device_calls(name):
    """Without the autograd key the PrivateUse1 registration runs."""
    fn, cpu_inputs = FORWARD[name]
    inputs = _to(cpu_inputs, f"flagos:{OTHER}")
    torch_fl.sim.reset_stats()
    with torch.inference_mode():
        out = fn(*inputs)
    assert torch_fl.sim.stats()["set_device_calls"] == 2
    torch.testing.assert_close(out.cpu(), fn(*cpu_inputs), rtol=1e-4, atol=1e-5)


# Not the fused scaled_dot_product_attention: its three launches are one
# kernel's (the SDPA hook), whose own guard makes the device current for all
# of them, boundary guard or not.
NEGATIVE = ["rms_norm", "linear_3d", "_scaled_dot_product_attention_math"]


@pytest.mark.parametrize("name", NEGATIVE)
def test_negative_control_without_composite_guard_count_is_higher(name):
    """rms_norm, linear and attention launch several inner ops; without the
    boundary guard each pays its own switch and restore (the values stay
    right: the inner guards are still on)."""
    fn, cpu_inputs = FORWARD[name]
    C._set_composite_guards_enabled(False)
    out, _, stats = _run_forward(name, f"flagos:{OTHER}", CURRENT)
    inner = stats["launches"][OTHER]
    assert inner >= 2
    assert stats["set_device_calls"] > 2
    torch.testing.assert_close(out.cpu(), fn(*cpu_inputs), rtol=1e-4, atol=1e-5)


def test_layer_norm_backward_makes_two_set_device_calls():
    """Backward runs on the autograd engine's thread for the tensors' device,
    which makes that device current once, when the thread starts: at most 2
    calls (0 once the thread exists), never one pair per inner launch."""
    x, w, b = (t.to(f"flagos:{OTHER}").requires_grad_() for t in FORWARD["layer_norm"][1])
    torch.flagos.set_device(CURRENT)
    out = F.layer_norm(x, (8,), w, b)
    grad = torch.ones_like(out)
    torch_fl.sim.reset_stats()
    out.backward(grad)
    stats = torch_fl.sim.stats()
    assert stats["launches"][OTHER] >= 1 and stats["launches"][CURRENT] == 0
    assert stats["set_device_calls"] <= 2
    cx, cw, cb = (t.clone().requires_grad_() for t in FORWARD["layer_norm"][1])
    F.layer_norm(cx, (8,), cw, cb).backward(torch.ones(4, 8))
    for got, want in ((x, cx), (w, cw), (b, cb)):
        torch.testing.assert_close(got.grad.cpu(), want.grad, rtol=1e-4, atol=1e-5)


def _params(device):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(5, 3).to(device)) for _ in range(3)]
    params.append(torch.nn.Parameter(torch.randn(7).to(device)))
    for i, p in enumerate(params):
        p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(10 + i)).to(device)
    return params


OPTIMIZERS = {
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, foreach=True),
    "adamw_amsgrad": lambda ps: torch.optim.AdamW(ps, lr=0.01, amsgrad=True, foreach=True),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.1, foreach=True),
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, foreach=True),
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=True),
    "sgd_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, foreach=True),
}


def _foreach_step_counts(make, device, current):
    params = _params(device)
    opt = make(params)
    opt.step()  # the first step creates the state
    torch.flagos.set_device(current)
    torch_fl.sim.reset_stats()
    opt.step()
    stats = torch_fl.sim.stats()
    return params, stats


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_foreach_optimizer_step_ops_make_two_set_device_calls_each(name):
    """Each _foreach_* op of the step makes its device current once: at most 2
    set-device calls per foreach op (the step's own scalar bookkeeping runs on
    the CPU), values as on the CPU."""
    make = OPTIMIZERS[name]
    params, stats = _foreach_step_counts(make, f"flagos:{OTHER}", CURRENT)
    foreach_ops = _foreach_ops_of_step(make)
    assert stats["rejected_launches"] == 0 and not stats["fallback_ops"], stats
    assert stats["launches"][CURRENT] == 0
    assert stats["set_device_calls"] == 2 * foreach_ops, (stats["set_device_calls"], foreach_ops)
    assert torch.flagos.current_device() == CURRENT
    cpu = _params("cpu")
    opt = make(cpu)
    opt.step()
    opt.step()
    for got, want in zip(params, cpu):
        torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_foreach_optimizer_step_makes_no_set_device_call_on_current_device(name):
    _, stats = _foreach_step_counts(OPTIMIZERS[name], f"flagos:{CURRENT}", CURRENT)
    assert stats["set_device_calls"] == 0
    assert stats["launches"][CURRENT] > 0


@pytest.mark.parametrize("name", ["adamw", "adamw_amsgrad"])
def test_negative_control_foreach_step_without_composite_guard_count_is_higher(name):
    make = OPTIMIZERS[name]
    C._set_composite_guards_enabled(False)
    _, stats = _foreach_step_counts(make, f"flagos:{OTHER}", CURRENT)
    assert stats["set_device_calls"] > 2 * _foreach_ops_of_step(make)


def _foreach_ops_of_step(make) -> int:
    """The _foreach_* calls of a second step on flagos tensors (those that run on the device)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            first = args[0] if args else None
            if func.name().startswith("aten::_foreach_") and isinstance(first, (list, tuple)) and first \
                    and isinstance(first[0], torch.Tensor) and first[0].device.type == "flagos":
                self.n += 1
            return func(*args, **(kwargs or {}))

    params = _params(f"flagos:{OTHER}")
    opt = make(params)
    opt.step()
    counter = Count()
    with counter:
        opt.step()
    return counter.n


def test_every_composite_guard_runs_a_composite_kernel():
    """Each op of yaml/composite.yaml still has the composite kernel that the
    guard runs (a torch upgrade that gives one a backend kernel must make this
    fail, not silently change what runs), and the guard is registered under
    each key its entry names, and under no other."""
    entries = _guarded_entries()
    assert len(entries) >= 40 and "rms_norm" in entries and "_foreach_zero_" in entries, sorted(entries)
    for name, keys in entries.items():
        assert any(torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", key)
                   for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd")), name
        assert not torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", "CPU"), name
        dump = torch._C._dispatch_dump_table(f"aten::{name}")
        for key in ("PrivateUse1", "AutogradPrivateUse1"):
            line = _registration(dump, key)
            if key in keys:
                assert "composite_guard" in line, f"{name} under {key}: {line!r}"
            else:
                assert "composite_guard" not in line, f"{name} under {key}: {line!r}"


def test_composite_guard_registrations_negative_control():
    """An op outside yaml/composite.yaml has no composite guard (the check above can fail)."""
    assert "matmul" not in _guarded_entries()
    for name in ("matmul", "softmax.int"):
        line = _registration(torch._C._dispatch_dump_table(f"aten::{name}"), "PrivateUse1")
        assert "composite_guard" not in line, f"{name}: {line!r}"


def _registration(dump: str, key: str) -> str:
    """The line of a dispatch table dump for `key` ("" when the key has no kernel)."""
    for line in dump.splitlines():
        if line.startswith(f"{key}: "):
            return line
    return ""


def _guarded_entries() -> dict[str, tuple[str, ...]]:
    """op -> the dispatch keys of its composite guard, from the registry."""
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.insert(0, root)
    from codegen.registry import Paths, load_registry

    return {entry.op: entry.keys for entry in load_registry(Paths(root)).composite}


def test_rms_norm_backward_makes_at_most_two_set_device_calls():
    """rms_norm's backward decomposes into about 15 launches on the engine's thread."""
    x, w = (t.to(f"flagos:{OTHER}").requires_grad_() for t in FORWARD["rms_norm"][1])
    torch.flagos.set_device(CURRENT)
    out = _rms_norm(x, w)
    grad = torch.ones_like(out)
    torch_fl.sim.reset_stats()
    out.backward(grad)
    stats = torch_fl.sim.stats()
    assert stats["launches"][OTHER] >= 5 and stats["launches"][CURRENT] == 0, stats["launches"]
    assert stats["set_device_calls"] <= 2
    assert torch.flagos.current_device() == CURRENT
    cx, cw = (t.clone().requires_grad_() for t in FORWARD["rms_norm"][1])
    _rms_norm(cx, cw).backward(torch.ones(4, 8))
    torch.testing.assert_close(x.grad.cpu(), cx.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w.grad.cpu(), cw.grad, rtol=1e-4, atol=1e-5)
