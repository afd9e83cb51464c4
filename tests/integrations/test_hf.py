"""torch_fl.integrations.hf: accelerate, transformers and diffusers place
models and training on flagos devices, not silently on the CPU. Each check
looks at where the parameters are and at which devices the simulator saw
launches on; with FLAGOS_HF_INTEGRATION=0 (the libraries on their own) the
same checks find the CPU, which is what users saw."""

from __future__ import annotations

import json
import socket
import warnings

import pytest
import torch

import torch_fl

accelerate = pytest.importorskip("accelerate")
transformers = pytest.importorskip("transformers")
diffusers = pytest.importorskip("diffusers")

from accelerate.state import AcceleratorState  # noqa: E402
from accelerate.utils import get_max_memory  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_accelerate_state():
    # accelerate keeps one process state; each test decides it anew.
    AcceleratorState._reset_state(reset_partial_state=True)
    warnings.filterwarnings("ignore", category=FutureWarning)
    yield
    AcceleratorState._reset_state(reset_partial_state=True)


@pytest.fixture
def integration_off(monkeypatch):
    monkeypatch.setenv("FLAGOS_HF_INTEGRATION", "0")


def free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def devices_of(model) -> set[str]:
    return {str(p.device) for p in model.parameters()}


def small_llama_config():
    return transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


@pytest.fixture(scope="module")
def saved_llama(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("llama")
    transformers.LlamaForCausalLM(small_llama_config()).save_pretrained(path)
    return path


# accelerate


def test_get_max_memory_reports_every_flagos_device():
    memory = get_max_memory()
    count = torch.flagos.device_count()
    assert list(memory)[:count] == list(range(count)) and "cpu" in memory
    for index in range(count):
        free, total = torch.flagos.mem_get_info(index)
        assert 0 < memory[index] <= total


def test_get_max_memory_without_the_integration_reports_only_the_cpu(integration_off):
    assert list(get_max_memory()) == ["cpu"]


def test_get_max_memory_keeps_the_callers_limits():
    limits = {2: "1MB", 0: 1000, "cpu": "1GB"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # accelerate would warn "Device 0 is not available" (it counts CUDA's)
        memory = get_max_memory(limits)
    assert memory == {0: 1000, 2: 10**6, "cpu": 10**9}
    assert limits[2] == 10**6  # converted in place, as accelerate does: transformers reads the dict back


def test_get_max_memory_warns_about_a_device_that_does_not_exist():
    with pytest.warns(UserWarning, match=r"flagos devices \[9\] do not exist"):
        get_max_memory({9: 1000})


def test_accelerator_takes_the_current_flagos_device():
    torch.flagos.set_device(2)
    assert accelerate.Accelerator().device == torch.device("flagos:2")


def test_accelerator_takes_the_local_rank_of_a_launcher(fresh_python):
    # Under a launcher accelerate starts a process group: a one-process job, in its own interpreter.
    out = fresh_python("import accelerate\nprint(accelerate.PartialState().device)",
                       env={"LOCAL_RANK": "3", "RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                            "MASTER_PORT": str(free_port())})
    assert out.split()[-1] == "flagos:3", out


def test_accelerator_without_the_integration_takes_the_cpu(integration_off):
    assert accelerate.Accelerator().device == torch.device("cpu")


def test_accelerator_prepares_a_model_on_flagos():
    torch.flagos.set_device(1)
    model = accelerate.Accelerator().prepare(torch.nn.Linear(4, 2))
    torch_fl.sim.reset_stats()
    model(torch.ones(3, 4, device=model.weight.device)).sum().backward()
    assert devices_of(model) == {"flagos:1"}
    launches = torch_fl.sim.stats()["launches"]
    assert launches.get(1, 0) > 0 and sum(launches.values()) == launches[1]


# transformers


def forward_launches(model, ids) -> dict:
    torch_fl.sim.reset_stats()
    with torch.no_grad():
        logits = model(ids.to(model.device)).logits
    return logits.cpu(), {device: n for device, n in torch_fl.sim.stats()["launches"].items() if n}


@pytest.mark.parametrize("device_map, max_memory", [
    ("auto", {0: "60KB", 1: "60KB", 2: "60KB", 3: "1GB", "cpu": "1GB"}),
    ("balanced", None),
])
def test_transformers_device_map_splits_a_model_over_flagos_devices(saved_llama, device_map, max_memory):
    model = transformers.LlamaForCausalLM.from_pretrained(saved_llama, device_map=device_map, max_memory=max_memory)
    placed = devices_of(model)
    assert len(placed) >= 2 and all(device.startswith("flagos:") for device in placed), model.hf_device_map
    ids = torch.randint(0, 64, (1, 5), generator=torch.Generator().manual_seed(1))
    logits, launches = forward_launches(model, ids)
    assert {f"flagos:{device}" for device in launches} == placed
    expected = transformers.LlamaForCausalLM.from_pretrained(saved_llama)(ids).logits
    torch.testing.assert_close(logits, expected.detach(), atol=1e-4, rtol=1e-4)


def test_transformers_device_map_without_the_integration_keeps_the_cpu(saved_llama, integration_off):
    model = transformers.LlamaForCausalLM.from_pretrained(saved_llama, device_map="balanced")
    assert devices_of(model) == {"cpu"}


def training_arguments(tmp_path):
    return transformers.TrainingArguments(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2,
                                          learning_rate=0.1, report_to=[], save_strategy="no",
                                          logging_strategy="no", dataloader_pin_memory=False)


def token_batches():
    generator = torch.Generator().manual_seed(3)
    return [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 64, (4, 6), generator=generator)]


def test_trainer_trains_on_the_current_flagos_device(tmp_path):
    torch.flagos.set_device(1)
    args = training_arguments(tmp_path)
    assert args.device == torch.device("flagos:1") and args.n_gpu == 1
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(small_llama_config()).to("flagos:1")
    before = {name: p.detach().cpu().clone() for name, p in model.named_parameters()}
    trainer = transformers.Trainer(model=model, args=args, train_dataset=token_batches())
    torch_fl.sim.reset_stats()
    trainer.train()
    assert devices_of(trainer.model) == {"flagos:1"}
    launches = torch_fl.sim.stats()["launches"]
    assert launches.get(1, 0) > 0 and sum(launches.values()) == launches[1], launches
    assert torch_fl.sim.stats()["fallback_ops"] == {}
    # The default optimizer, fused AdamW, steps on flagos: one list launch per
    # parameter group (Trainer's: with and without weight decay) and step.
    assert trainer.optimizer.defaults.get("fused") and args.optim == "adamw_torch_fused"
    groups = len(trainer.optimizer.param_groups)
    assert groups == 2 and torch_fl.sim.stats()["op_launches"]["aclnnFusedAdamw"] == 2 * groups
    changed = [name for name, p in trainer.model.named_parameters() if not torch.equal(p.detach().cpu(), before[name])]
    assert "lm_head.weight" in changed and len(changed) > len(before) // 2


def test_trainer_without_the_integration_moves_the_model_to_the_cpu(tmp_path, integration_off):
    args = training_arguments(tmp_path)
    assert args.device == torch.device("cpu")
    model = transformers.LlamaForCausalLM(small_llama_config()).to("flagos:1")
    trainer = transformers.Trainer(model=model, args=args, train_dataset=token_batches())
    assert devices_of(trainer.model) == {"cpu"}


# A Trainer script, started by torchrun on two processes. Each rank trains on
# its own data: only synchronized gradients end with the same weights.
TRAINER_RANK = """
import json, os, sys
import torch, torch_fl, transformers

rank = int(os.environ["RANK"])
config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
torch.manual_seed(0)
model = transformers.LlamaForCausalLM(config)
generator = torch.Generator().manual_seed(10 + rank)
data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 64, (8, 6), generator=generator)]
args = transformers.TrainingArguments(output_dir=sys.argv[1], max_steps=3, per_device_train_batch_size=2,
                                      learning_rate=1e-2, report_to=[], save_strategy="no", logging_strategy="no",
                                      dataloader_pin_memory=False, optim="adamw_torch")
trainer = transformers.Trainer(model=model, args=args, train_dataset=data)
torch_fl.sim.reset_stats()
trainer.train()
torch.save(trainer.model.lm_head.weight.detach().cpu(), os.path.join(sys.argv[1], f"{rank}.pt"))
with open(os.path.join(sys.argv[1], f"{rank}.json"), "w") as out:
    json.dump({"device": str(args.device), "parameters": sorted({str(p.device) for p in trainer.model.parameters()}),
               "wrapper": type(trainer.model_wrapped).__name__,
               "launches": {str(d): n for d, n in torch_fl.sim.stats()["launches"].items() if n}}, out)
"""


def train_on_two_processes(fresh_python, tmp_path, env=None):
    (tmp_path / "rank.py").write_text(TRAINER_RANK)
    fresh_python("import sys; from torch.distributed.run import main; main(sys.argv[1:])",
                 "--nproc-per-node", "2", "--master-port", str(free_port()), "rank.py", str(tmp_path), env=env)
    ranks = [json.loads((tmp_path / f"{rank}.json").read_text()) for rank in (0, 1)]
    weights = [torch.load(tmp_path / f"{rank}.pt") for rank in (0, 1)]
    return ranks, weights


def test_trainer_on_two_processes_trains_data_parallel_on_each_ranks_device(fresh_python, tmp_path):
    ranks, weights = train_on_two_processes(fresh_python, tmp_path)
    for rank, result in enumerate(ranks):
        assert result == {"device": f"flagos:{rank}", "parameters": [f"flagos:{rank}"],
                          "wrapper": "DistributedDataParallel", "launches": {str(rank): result["launches"][str(rank)]}}
    torch.testing.assert_close(weights[0], weights[1], atol=0, rtol=0)


def test_trainer_on_two_processes_without_the_integration_trains_each_alone_on_the_cpu(fresh_python, tmp_path):
    ranks, weights = train_on_two_processes(fresh_python, tmp_path, env={"FLAGOS_HF_INTEGRATION": "0"})
    assert [(r["device"], r["wrapper"], r["launches"]) for r in ranks] == [("cpu", "LlamaForCausalLM", {})] * 2
    assert not torch.equal(weights[0], weights[1])


# safetensors


@pytest.fixture
def saved_tensors(tmp_path):
    from safetensors.torch import save_file

    path = tmp_path / "tensors.safetensors"
    save_file({"weight": torch.arange(6.0).reshape(2, 3)}, path)
    return path


@pytest.mark.parametrize("device, expected", [
    ("flagos:1", "flagos:1"), (torch.device("flagos", 3), "flagos:3"), ("flagos", "flagos:2"),  # current
    ("cpu", "cpu"), (1, "flagos:1"),
])
def test_safetensors_load_file_takes_a_flagos_device(saved_tensors, device, expected):
    import safetensors.torch

    torch.flagos.set_device(2)
    loaded = safetensors.torch.load_file(saved_tensors, device=device)["weight"]
    assert str(loaded.device) == expected
    assert torch.equal(loaded.cpu(), torch.arange(6.0).reshape(2, 3))


def test_safetensors_load_file_without_the_integration_rejects_flagos(saved_tensors, integration_off):
    import safetensors.torch

    with pytest.raises(Exception, match="device flagos:1 is invalid"):
        safetensors.torch.load_file(saved_tensors, device="flagos:1")


def test_diffusers_group_offloading_to_disk_onloads_on_flagos(tmp_path):
    torch.manual_seed(0)
    model = diffusers.AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",),
                                    up_block_types=("UpDecoderBlock2D",), block_out_channels=(8,),
                                    latent_channels=4, norm_num_groups=4, sample_size=8).eval()
    image = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(image).sample
    # diffusers reloads onto the device type (load_file(device="flagos")), so the current device, as on CUDA.
    torch.flagos.set_device(1)
    model.enable_group_offload(torch.device("flagos", 1), offload_type="block_level", num_blocks_per_group=1,
                               offload_to_disk_path=str(tmp_path))
    torch_fl.sim.reset_stats()
    with torch.no_grad():
        out = model(image.to("flagos:1")).sample
    assert torch_fl.sim.stats()["launches"].get(1, 0) > 0
    torch.testing.assert_close(out.cpu(), expected, atol=1e-5, rtol=1e-5)


# diffusers


class TwoModels(diffusers.DiffusionPipeline):
    def __init__(self, unet, vae):
        super().__init__()
        self.register_modules(unet=unet, vae=vae)


@pytest.fixture(scope="module")
def saved_pipeline(tmp_path_factory):
    torch.manual_seed(0)
    unet = diffusers.UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=8, attention_head_dim=2, norm_num_groups=4)
    vae = diffusers.AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 2,
                                  up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(8, 16),
                                  latent_channels=4, norm_num_groups=4, sample_size=16)
    path = tmp_path_factory.mktemp("pipeline")
    TwoModels(unet, vae).save_pretrained(path)
    return path


def unet_step(unet):
    generator = torch.Generator().manual_seed(2)
    latents, text = torch.randn(1, 4, 8, 8, generator=generator), torch.randn(1, 3, 8, generator=generator)
    device = next(unet.parameters()).device
    with torch.no_grad():
        return unet(latents.to(device), torch.tensor([10], device=device), text.to(device)).sample


def test_diffusers_pipeline_balanced_places_components_on_flagos_devices(saved_pipeline):
    pipeline = TwoModels.from_pretrained(saved_pipeline, device_map="balanced")
    unet_devices, vae_devices = devices_of(pipeline.unet), devices_of(pipeline.vae)
    assert len(unet_devices) == 1 and len(vae_devices) == 1 and unet_devices != vae_devices
    assert all(device.startswith("flagos:") for device in unet_devices | vae_devices), pipeline.hf_device_map
    torch_fl.sim.reset_stats()
    unet_step(pipeline.unet)
    (unet_device,) = unet_devices
    assert torch_fl.sim.stats()["launches"].get(int(unet_device.split(":")[1]), 0) > 0


def test_diffusers_pipeline_balanced_without_the_integration_keeps_the_cpu(saved_pipeline, integration_off):
    pipeline = TwoModels.from_pretrained(saved_pipeline, device_map="balanced")
    assert devices_of(pipeline.unet) | devices_of(pipeline.vae) == {"cpu"}


def test_diffusers_model_device_map_auto_splits_over_flagos_devices(saved_pipeline):
    unet = diffusers.UNet2DConditionModel.from_pretrained(
        saved_pipeline, subfolder="unet", device_map="auto", max_memory={0: "30KB", 1: "30KB", 2: "30KB", 3: "1GB"})
    placed = devices_of(unet)
    assert len(placed) >= 2 and all(device.startswith("flagos:") for device in placed), unet.hf_device_map
    torch_fl.sim.reset_stats()
    unet_step(unet)
    launches = torch_fl.sim.stats()["launches"]
    assert {f"flagos:{device}" for device, n in launches.items() if n} == placed


# versions


def test_another_minor_release_warns_once(monkeypatch):
    from torch_fl.integrations import hf

    monkeypatch.setattr(hf, "_version_warned", set())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hf._check_version("accelerate")  # the checked release: silent
    monkeypatch.setitem(hf.CHECKED_VERSIONS, "accelerate", "0.1")
    with pytest.warns(UserWarning, match=r"accelerate 0\.1; with accelerate 1\.15\.\d+, check where"):
        hf._check_version("accelerate")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hf._check_version("accelerate")  # once
