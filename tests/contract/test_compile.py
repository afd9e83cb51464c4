"""torch.compile on flagos: Inductor captures the graph and, in its lite mode,
runs every op as a flagos kernel. Any other mode needs generated kernels and
raises an error naming the fix (it raised KeyError: 'flagos')."""

from __future__ import annotations


def test_lite_mode_matches_eager_forward_and_backward(python):
    out = python("""
        torch.manual_seed(0)
        torch.flagos.set_device(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                    torch.nn.Linear(16, 4)).to("flagos:1")
        x = torch.randn(5, 8, device="flagos:1")
        compiled = torch.compile(model, mode="lite")
        eager_out = model(x)
        out = compiled(x)
        out.sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        eager_out.sum().backward()
        same_grads = all(torch.allclose(g.cpu(), p.grad.cpu(), atol=1e-6) for g, p in zip(grads, model.parameters()))
        print(torch.allclose(out.cpu(), eager_out.cpu(), atol=1e-6), same_grads, out.device,
              torch.flagos.current_device(), torch_fl._C._fallback_counts())
    """, timeout=600)
    assert out.splitlines()[-1] == "True True flagos:1 0 {}"


def test_default_mode_runs_what_needs_no_generated_kernel_on_the_right_device(python):
    # A matmul is an ATen kernel in any mode; its output buffer must be
    # allocated on the graph's device, not on the current one.
    out = python("""
        torch.flagos.set_device(0)
        model = torch.nn.Linear(8, 8).to("flagos:2")
        x = torch.randn(2, 8, device="flagos:2")
        y = torch.compile(model)(x)
        print(y.device, torch.allclose(y.cpu(), model(x).cpu()), torch.flagos.current_device())
    """, timeout=600)
    assert out.splitlines()[-1] == "flagos:2 True 0"


def test_default_mode_needing_generated_kernels_names_the_fix(python):
    out = python("""
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).to("flagos:1")
        try:
            torch.compile(model)(torch.randn(2, 8, device="flagos:1"))
            print("compiled")
        except Exception as error:
            print(type(error).__name__, "|", str(error).splitlines()[0])
    """, timeout=600)
    assert "KeyError" not in out
    assert "cannot generate flagos kernels" in out and 'mode="lite"' in out
