"""torch.compile on flagos (torch_fl/_compile.py, torch_fl/_inductor.py): with
any mode, Inductor captures a flagos graph and runs every op as a flagos
kernel (its lite options). Before, only mode="lite" ran; the default mode
raised "No interface for device flagos" or an error naming mode="lite", and
reduce-overhead / max-autotune raised too.

Every case runs in a fresh interpreter (Inductor's state, its caches and a
crash stay there), on a device that is not the current one, and checks that
the compiled graph launched on that device only, fell back to the CPU for
nothing, and left the current device alone."""

from __future__ import annotations

import textwrap

import pytest

# Prepended to each case: the model runs on flagos:1 while flagos:0 is current.
SETUP = """
    import copy, warnings
    import torch_fl
    torch.manual_seed(0)
    torch.flagos.set_device(0)
    DEV = "flagos:1"

    def close(a, b, atol=1e-5):
        return torch.allclose(a.detach().cpu(), b.detach().cpu(), atol=atol)

    def launched_on():
        launches = torch_fl.sim.stats()["launches"]
        return sorted(device for device, count in launches.items() if count)

    def ran_on_flagos_1():
        return launched_on() == [1] and torch_fl._C._fallback_counts() == {} and torch.flagos.current_device() == 0

    def mlp():
        return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                   torch.nn.Linear(16, 4)).to(DEV)
"""


def run(python, code: str) -> list[str]:
    """The last line `code` prints, split; SETUP comes first."""
    return python(textwrap.dedent(SETUP) + textwrap.dedent(code), timeout=900).splitlines()[-1].split()


@pytest.mark.parametrize("mode", ["default", "lite", "reduce-overhead", "max-autotune"])
def test_mode_matches_eager_forward_and_backward(python, mode):
    out = run(python, f"""
        model = mlp()
        x = torch.randn(5, 8, device=DEV)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled = torch.compile(model, mode={mode!r})
            torch_fl.sim.reset_stats()
            out = compiled(x)
            out.sum().backward()
        warned = sorted(str(w.message).split("=")[0].split()[-1] for w in caught
                        if "torch.compile on flagos" in str(w.message))
        grads = [p.grad.clone() for p in model.parameters()]
        ran = ran_on_flagos_1()
        model.zero_grad()
        eager_out = model(x)
        eager_out.sum().backward()
        same_grads = all(close(g, p.grad) for g, p in zip(grads, model.parameters()))
        print(close(out, eager_out), same_grads, out.device, ran, ",".join(warned) or "-")
    """)
    warned = {"default": "-", "lite": "-", "reduce-overhead": "triton.cudagraphs",
              "max-autotune": "coordinate_descent_tuning,max_autotune,triton.cudagraphs"}[mode]
    assert out == ["True", "True", "flagos:1", "True", warned]


def test_each_unsupported_option_warns_once(python):
    out = run(python, """
        model = mlp()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for shape in [(2, 8), (3, 8), (4, 8)]:
                torch.compile(model, mode="reduce-overhead", dynamic=False)(torch.randn(*shape, device=DEV))
        print(sum("triton.cudagraphs" in str(w.message) for w in caught))
    """)
    assert out == ["1"]


@pytest.mark.parametrize("how", ["inductor-as-before", "fallback_by_default=False"])
def test_negative_control_generated_kernels_raise_naming_the_fix(python, how):
    """Without torch_fl's Inductor backend (Inductor's own class put back) the
    default mode is what it was: Inductor must generate kernels for the
    LayerNorm and ReLU, and the flagos Scheduling refuses, naming the
    option that asks for them; fallback_by_default=False asks for them too."""
    out = python(textwrap.dedent(SETUP) + textwrap.dedent(f"""
        if {how!r} == "inductor-as-before":
            torch._TorchCompileInductorWrapper = torch_fl._compile.InductorBackend.__bases__[0]
            options = None
        else:
            options = {{"fallback_by_default": False}}
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8), torch.nn.ReLU()).to(DEV)
        try:
            torch.compile(model, options=options)(torch.randn(2, 8, device=DEV))
            print("compiled")
        except Exception as error:
            print(type(error).__name__, "|", str(error).splitlines()[0])
    """), timeout=900)
    assert "compiled" not in out and "KeyError" not in out and "No interface" not in out
    assert "cannot generate flagos kernels" in out and "fallback_by_default=False" in out


def test_cpu_graphs_compile_as_without_torch_fl(python):
    """Only graphs that use flagos get the lite options: a CPU graph keeps
    Inductor's generated kernels (its ReLU fuses into generated C++)."""
    out = run(python, """
        from torch._inductor.utils import run_and_get_code
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
        x = torch.randn(2, 8)
        out, code = run_and_get_code(torch.compile(model), x)
        print(close(out, model(x)), "cpp_fused" in "".join(code), "cpp_fused" in "".join(
            run_and_get_code(torch.compile(model.to(DEV)), x.to(DEV))[1]))
    """)
    assert out == ["True", "True", "False"]


def test_dynamic_shapes_with_attention_compile_once(python):
    """dynamic=True: the fused-attention choice reads symbolic sizes (numel()
    on them raised), and two sequence lengths run one compiled graph, both on
    CANN's fused attention."""
    out = run(python, """
        from torch._dynamo.utils import counters
        import torch.nn.functional as F

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm, self.qkv = torch.nn.LayerNorm(16), torch.nn.Linear(16, 48)
            def forward(self, x):
                q, k, v = self.qkv(self.norm(x)).view(x.shape[0], x.shape[1], 3, 2, 8).unbind(2)
                return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                      is_causal=True)
        model = Block().to(DEV)
        compiled = torch.compile(model, dynamic=True)
        results = []
        for length in (5, 11):
            x = torch.randn(2, length, 16, device=DEV)
            torch_fl.sim.reset_stats()
            out = compiled(x)
            fused = torch_fl.sim.stats()["op_launches"].get("aclnnFlashAttentionScoreV2", 0)
            results.append(f"{close(out, model(x))}/{fused}/{ran_on_flagos_1()}")
        print(*results, counters["stats"]["unique_graphs"])
    """)
    assert out == ["True/1/True", "True/1/True", "1"]


def test_training_step_matches_eager(python):
    """Forward, backward and an AdamW step, compiled as one function, twice,
    against the same steps in eager mode from the same weights."""
    out = run(python, """
        def step(model, optimizer, x, y):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss

        eager = mlp()
        compiled_model = copy.deepcopy(eager)
        eager_opt = torch.optim.AdamW(eager.parameters(), lr=0.01)
        compiled_opt = torch.optim.AdamW(compiled_model.parameters(), lr=0.01)
        compiled_step = torch.compile(step)
        x, y = torch.randn(6, 8, device=DEV), torch.randn(6, 4, device=DEV)
        initial = eager[0].weight.detach().clone()
        losses = []
        torch_fl.sim.reset_stats()
        for _ in range(2):
            losses.append(close(compiled_step(compiled_model, compiled_opt, x, y), step(eager, eager_opt, x, y)))
        same = all(close(a, b, atol=1e-5) for a, b in zip(compiled_model.parameters(), eager.parameters()))
        moved = not close(compiled_model[0].weight, initial)
        print(*losses, same, moved, ran_on_flagos_1())
    """)
    assert out == ["True", "True", "True", "True", "True"]


def test_llama_forward_and_greedy_decode(python):
    """transformers' LlamaForCausalLM (tiny config, no download): compiled
    forward logits and compiled greedy generate() equal eager's."""
    pytest.importorskip("transformers")
    out = run(python, """
        import transformers
        transformers.logging.set_verbosity_error()
        config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                          max_position_embeddings=64)
        model = transformers.LlamaForCausalLM(config).eval().to(DEV)
        ids = torch.randint(0, 64, (2, 5), generator=torch.Generator().manual_seed(1)).to(DEV)
        with torch.no_grad():
            eager_logits = model(ids).logits
            eager_tokens = model.generate(ids, max_new_tokens=6, do_sample=False)
            torch_fl.sim.reset_stats()
            logits = torch.compile(model)(ids).logits
            model.forward = torch.compile(model.forward)
            tokens = model.generate(ids, max_new_tokens=6, do_sample=False)
        print(close(logits, eager_logits, atol=1e-4), torch.equal(tokens.cpu(), eager_tokens.cpu()),
              tokens.shape[1], ran_on_flagos_1())
    """)
    assert out == ["True", "True", "11", "True"]


def test_diffusers_transformer_with_attention(python):
    """diffusers' QwenImageTransformer2DModel (the showcase's small config):
    joint attention through CANN's fused kernel, compiled equals eager."""
    pytest.importorskip("diffusers")
    out = run(python, """
        import sys
        sys.path.insert(0, "examples")
        import qwen_image_showcase as showcase
        transformer = showcase.make_transformer().to(DEV)
        g = torch.Generator().manual_seed(5)
        inputs = dict(hidden_states=torch.randn(1, 16, 16, generator=g).to(DEV),
                      encoder_hidden_states=torch.randn(1, 5, 16, generator=g).to(DEV),
                      encoder_hidden_states_mask=torch.ones(1, 5, device=DEV),
                      timestep=torch.tensor([0.5], device=DEV), img_shapes=[(1, 4, 4)], return_dict=False)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eager = transformer(**inputs)[0]
            torch_fl.sim.reset_stats()
            out = torch.compile(transformer)(**inputs)[0]
        fused = torch_fl.sim.stats()["op_launches"].get("aclnnFlashAttentionScoreV2", 0)
        print(close(out, eager, atol=1e-4), out.device, fused > 0, ran_on_flagos_1())
    """)
    assert out == ["True", "flagos:1", "True", "True"]
