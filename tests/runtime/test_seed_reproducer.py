"""The seed report's reproducer: with device 1 current, `x + 0.5` on a tensor
of flagos:0 must run on flagos:0, give the right values and leave device 1
current. Once through a generated kernel (add), once through a handwritten
one (_foreach_add). With the guards off (the negative control) the same
calls fail in the simulator: rejected in `error` mode, NaN in `nan` mode."""

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")
C = torch_fl._C

EXPECTED = [1.5, 2.5, 4.5]


def generated_add(x):
    return x + 0.5


def handwritten_add(x):
    return torch._foreach_add([x], 0.5)[0]


KERNELS = [pytest.param(generated_add, id="generated"), pytest.param(handwritten_add, id="handwritten")]
# The ACLNN operator each path must launch (so that neither quietly takes the other's).
OPERATOR = {generated_add: "aclnnAdds", handwritten_add: "aclnnForeachAddScalarV2"}


@pytest.mark.parametrize("kernel", KERNELS)
def test_reproducer_runs_on_the_tensors_device(kernel):
    torch.flagos.set_device(1)
    x = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float32, device="flagos:0")
    torch_fl.sim.reset_stats()
    y = kernel(x)
    torch.flagos.synchronize(0)
    stats = torch_fl.sim.stats()
    assert y.cpu().tolist() == EXPECTED
    assert y.device == torch.device("flagos", 0)
    assert torch.flagos.current_device() == 1
    assert stats["rejected_launches"] == 0
    assert stats["mismatched_launches"] == 0
    assert stats["launches"][0] >= 1 and stats["launches"][1] == 0
    assert stats["op_launches"].get(OPERATOR[kernel]) == 1


@pytest.mark.parametrize("kernel", KERNELS)
def test_negative_control_error_mode(kernel, unguarded):
    torch.flagos.set_device(1)
    x = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float32, device="flagos:0")
    with pytest.raises(RuntimeError, match=r"lives on device 0 but the launch runs on device 1"):
        kernel(x)
    assert torch_fl.sim.stats()["rejected_launches"] >= 1
    assert torch.flagos.current_device() == 1


@pytest.mark.parametrize("kernel", KERNELS)
def test_negative_control_nan_mode(kernel, unguarded):
    torch.flagos.set_device(1)
    x = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float32, device="flagos:0")
    torch_fl.sim.set_mismatch_mode("nan")
    y = kernel(x)
    assert torch.isnan(y.cpu()).all()
    assert torch_fl.sim.stats()["mismatched_launches"] >= 1
