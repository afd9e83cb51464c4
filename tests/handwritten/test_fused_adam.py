"""_fused_adamw_ and _fused_adam_ (csrc/handwritten/fused_adam.cc), the steps
of torch.optim.AdamW / Adam with fused=True, on flagos:2 while flagos:0 is
current, against ATen's CPU kernel: float32 and bfloat16, amsgrad, maximize,
weight decay, a gradient scale and found_inf, empty parameters, the checks
at the call, and the guards-off negative control."""

import pytest
import torch
import torch_fl
from hw_util import DEVICE, assert_clean, needs_devices, rejected

pytestmark = needs_devices

OPS = {"adamw": torch.ops.aten._fused_adamw_, "adam": torch.ops.aten._fused_adam_}


def make_state(shapes, dtype, amsgrad, seed=0):
    """params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps on the CPU."""
    g = torch.Generator().manual_seed(seed)
    rand = lambda s: torch.randn(s, generator=g).to(dtype)
    params = [rand(s) for s in shapes]
    grads = [rand(s) for s in shapes]
    exp_avgs = [rand(s) * 0.1 for s in shapes]
    exp_avg_sqs = [rand(s).abs() * 0.1 for s in shapes]
    max_exp_avg_sqs = [v + rand(v.shape).abs() * 0.05 for v in exp_avg_sqs] if amsgrad else []
    steps = [torch.tensor(3.0) for _ in shapes]
    return [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps]


def to_device(state, device=DEVICE):
    moved = [[t.to(device) for t in lst] for lst in state]
    torch_fl.sim.reset_stats()
    return moved


def assert_state_close(actual, expected, dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1.6e-2, atol=1e-2)
    for got_list, want_list in zip(actual, expected):
        for got, want in zip(got_list, want_list):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got.cpu(), want, **tol)


def kwargs(**over):
    base = dict(lr=1e-2, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=False)
    base.update(over)
    return base


@pytest.mark.parametrize("kind", ["adamw", "adam"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("amsgrad,maximize", [(False, False), (True, False), (False, True), (True, True)])
def test_matches_cpu(kind, dtype, amsgrad, maximize):
    cpu = make_state([(4, 3), (5,), ()], dtype, amsgrad)
    dev = to_device(cpu)
    OPS[kind](*dev, **kwargs(amsgrad=amsgrad, maximize=maximize))
    OPS[kind](*cpu, **kwargs(amsgrad=amsgrad, maximize=maximize))
    assert_clean(*dev[0], ops=["aclnnFusedAdamw"])
    assert torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 1  # one list launch for the 3 parameters
    assert_state_close(dev, cpu, dtype)


@pytest.mark.parametrize("kind", ["adamw", "adam"])
def test_grad_scale_unscales_the_gradients(kind):
    cpu = make_state([(6,), (2, 2)], torch.float32, amsgrad=False)
    dev = to_device(cpu)
    scale = torch.tensor(4.0)
    no_inf = torch.tensor(0.0)
    OPS[kind](*dev, **kwargs(), grad_scale=scale.to(DEVICE), found_inf=no_inf.to(DEVICE))
    OPS[kind](*cpu, **kwargs(), grad_scale=scale, found_inf=no_inf)
    assert_clean(*dev[0], ops=["aclnnFusedAdamw"])
    assert_state_close(dev, cpu, torch.float32)  # the gradients too: ATen stores them unscaled


@pytest.mark.parametrize("scaled", [False, True])
def test_found_inf_skips_the_step_on_the_device(scaled):
    """CANN's operator reads found_inf when it runs: the step launches and
    writes nothing, and the gradients are not unscaled, as on the CPU."""
    cpu = make_state([(6,), (2, 2)], torch.float32, amsgrad=True)
    dev = to_device(cpu)
    scale = dict(grad_scale=torch.tensor(4.0, device=DEVICE)) if scaled else {}
    OPS["adamw"](*dev, **kwargs(amsgrad=True), found_inf=torch.tensor(1.0, device=DEVICE), **scale)
    assert torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 1
    assert torch_fl.sim.stats()["fallback_ops"] == {}
    assert_state_close(dev, cpu, torch.float32)  # nothing written, the gradients included


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_grad_scale_with_half_precision(dtype):
    cpu = make_state([(6,), (3, 2)], dtype, amsgrad=False)
    dev = to_device(cpu)
    OPS["adamw"](*dev, **kwargs(), grad_scale=torch.tensor(8.0, device=DEVICE))
    OPS["adamw"](*cpu, **kwargs(), grad_scale=torch.tensor(8.0))
    assert_clean(*dev[0], ops=["aclnnFusedAdamw"])
    assert_state_close(dev, cpu, dtype)


def test_parameters_on_several_devices_launch_once_per_device():
    cpu = make_state([(4, 3), (5,), (2,)], torch.float32, amsgrad=False)
    dev = [[t.to(device) for t, device in zip(lst, (DEVICE, "flagos:1", DEVICE))] for lst in cpu]
    torch.flagos.set_device(0)
    torch_fl.sim.reset_stats()
    OPS["adamw"](*dev, **kwargs())
    OPS["adamw"](*cpu, **kwargs())
    assert torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 2
    assert torch.flagos.current_device() == 0
    assert_state_close(dev, cpu, torch.float32)


def test_negative_hyperparameters_are_refused_at_the_call():
    dev = to_device(make_state([(4,)], torch.float32, amsgrad=False))
    with pytest.raises(RuntimeError, match=r"_fused_adamw_: CANN's fused AdamW operator takes lr, beta1, beta2 and "
                                           r"weight_decay >= 0, got lr=-0.01"):
        OPS["adamw"](*dev, **kwargs(lr=-1e-2))
    assert "aclnnFusedAdamw" not in torch_fl.sim.stats()["op_launches"]


def test_empty_parameters():
    cpu = make_state([(0,), (0, 3)], torch.float32, amsgrad=True)
    dev = to_device(cpu)
    OPS["adamw"](*dev, **kwargs(amsgrad=True))
    assert_clean(*dev[0])
    assert "aclnnFusedAdamw" not in torch_fl.sim.stats()["op_launches"]


def test_optimizer_steps_match_the_cpu():
    torch.manual_seed(0)
    cpu_model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    dev_model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.GELU(), torch.nn.Linear(4, 2)).to(DEVICE)
    dev_model.load_state_dict(cpu_model.state_dict())
    cpu_opt = torch.optim.AdamW(cpu_model.parameters(), lr=1e-2, fused=True, amsgrad=True)
    dev_opt = torch.optim.AdamW(dev_model.parameters(), lr=1e-2, fused=True, amsgrad=True)
    x = torch.randn(8, 5)
    torch_fl.sim.reset_stats()
    for _ in range(3):
        for model, opt, inp in ((cpu_model, cpu_opt, x), (dev_model, dev_opt, x.to(DEVICE))):
            opt.zero_grad()
            model(inp).square().sum().backward()
            opt.step()
    assert torch_fl.sim.stats()["fallback_ops"] == {}
    assert torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 3  # one a step
    for got, want in zip(dev_model.parameters(), cpu_model.parameters()):
        torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-5, atol=1e-6)


def test_checks_at_the_call():
    dev = to_device(make_state([(4,), (3,)], torch.float32, amsgrad=False))
    with pytest.raises(RuntimeError, match=r"_fused_adamw_: expected 2 tensors in exp_avgs"):
        OPS["adamw"](dev[0], dev[1], dev[2][:1], dev[3], [], dev[5], **kwargs())
    with pytest.raises(RuntimeError, match=r"_fused_adam_: expected 2 tensors in max_exp_avg_sqs"):
        OPS["adam"](*dev, **kwargs(amsgrad=True))
    with pytest.raises(RuntimeError, match=r"_fused_adamw_: each parameter's grad, exp_avg, exp_avg_sq and "
                                           r"max_exp_avg_sq must have its shape \[4\]"):
        OPS["adamw"](dev[0], [dev[1][1], dev[1][0]], dev[2], dev[3], [], dev[5], **kwargs())
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device"):
        OPS["adamw"](dev[0], [dev[1][0].to("flagos:1"), dev[1][1]], dev[2], dev[3], [], dev[5], **kwargs())
    cpu_param = [dev[0][0], dev[0][1].cpu()]
    with pytest.raises(RuntimeError, match=r"_fused_adamw_: expected every parameter on a flagos device, got cpu "
                                           r"at index 1"):
        OPS["adamw"](cpu_param, dev[1], dev[2], dev[3], [], dev[5], **kwargs())
    assert "aclnnFusedAdamw" not in torch_fl.sim.stats()["op_launches"]


def test_negative_control(unguarded):
    dev = to_device(make_state([(4,)], torch.float32, amsgrad=False))
    with rejected():
        OPS["adamw"](*dev, **kwargs())


@pytest.mark.parametrize("kind", ["adamw", "adam"])
@pytest.mark.parametrize("lr_device", ["cpu", DEVICE, "flagos:1"])
def test_tensor_lr_matches_cpu(kind, lr_device):
    cpu = make_state([(4, 3), (5,), (), (0,)], torch.float32, amsgrad=True)
    dev = to_device(cpu)
    args = kwargs(amsgrad=True, maximize=True)
    lr = torch.tensor(args.pop("lr"), dtype=torch.float64)
    lr_dev = lr.to(lr_device)
    torch_fl.sim.reset_stats()
    OPS[kind](*dev, lr=lr_dev, **args)
    OPS[kind](*cpu, lr=lr, **args)
    assert_clean(*dev[0], ops=["aclnnFusedAdamw"])
    assert torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 1
    assert_state_close(dev, cpu, torch.float32)


def test_optimizer_with_a_tensor_lr():
    torch.manual_seed(0)
    cpu_params = [torch.randn(4, 3, requires_grad=True)]
    dev_params = [cpu_params[0].detach().to(DEVICE).requires_grad_()]
    cpu_opt = torch.optim.AdamW(cpu_params, lr=torch.tensor(1e-2), fused=True)
    dev_opt = torch.optim.AdamW(dev_params, lr=torch.tensor(1e-2), fused=True)
    torch_fl.sim.reset_stats()
    for params, opt in ((cpu_params, cpu_opt), (dev_params, dev_opt)):
        for _ in range(2):
            opt.zero_grad()
            params[0].square().sum().backward()
            opt.step()
    assert torch_fl.sim.stats()["fallback_ops"] == {}
    assert torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 2
    torch.testing.assert_close(dev_params[0].detach().cpu(), cpu_params[0].detach(), rtol=1e-5, atol=1e-6)


def test_tensor_lr_must_have_one_element():
    dev = to_device(make_state([(4,)], torch.float32, amsgrad=False))
    args = kwargs()
    args.pop("lr")
    with pytest.raises(RuntimeError, match=r"_fused_adamw_: lr must have one element, got 2"):
        OPS["adamw"](*dev, lr=torch.tensor([1e-2, 1e-3]), **args)
    assert "aclnnFusedAdamw" not in torch_fl.sim.stats()["op_launches"]


def test_negative_control_tensor_lr(unguarded):
    dev = to_device(make_state([(4,)], torch.float32, amsgrad=False))
    args = kwargs()
    with rejected():
        OPS["adam"](*dev, lr=torch.tensor(args.pop("lr")), **args)


def test_grad_scaler_with_an_overflow_step_matches_the_cpu():
    """torch.amp.GradScaler with fused AdamW, unchanged user code: the scaler
    passes grad_scale and found_inf to _fused_adamw_; the step whose loss
    overflows is skipped on the device, as on the CPU."""

    def train(device):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.Linear(8, 3)).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
        scaler = torch.amp.GradScaler(torch.device(device).type, init_scale=2.0**16)
        x = torch.randn(5, 6).to(device)
        for i in range(4):
            opt.zero_grad()
            loss = model(x).square().sum()
            if i == 1:
                loss = loss * float("inf")
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return [p.detach().cpu() for p in model.parameters()], scaler.get_scale()

    torch_fl.sim.reset_stats()
    dev, dev_scale = train(DEVICE)
    stats = torch_fl.sim.stats()
    cpu, cpu_scale = train("cpu")
    assert stats["fallback_ops"] == {}
    assert stats["op_launches"]["aclnnFusedAdamw"] == 4  # the overflow step launches too, and writes nothing
    assert dev_scale == cpu_scale == 2.0**15  # the overflow halved the scale
    for got, want in zip(dev, cpu):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
