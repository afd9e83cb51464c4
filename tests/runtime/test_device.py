"""torch.flagos device management and the accelerator API."""

import subprocess
import sys
import threading

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")


def test_device_count_defaults_to_four():
    assert torch.flagos.is_available()
    assert torch.flagos.device_count() == 4


def test_set_device_changes_current_device():
    torch.flagos.set_device(2)
    assert torch.flagos.current_device() == 2
    torch.flagos.set_device("flagos:1")
    assert torch.flagos.current_device() == 1
    torch.flagos.set_device(torch.device("flagos", 3))
    assert torch.flagos.current_device() == 3


@pytest.mark.parametrize("bad", [99, 4, -1])
def test_set_device_bad_index_raises_and_changes_nothing(bad):
    torch.flagos.set_device(1)
    with pytest.raises(IndexError, match=rf"flagos device index {bad} is out of range: there are 4"):
        torch.flagos.set_device(bad)
    assert torch.flagos.current_device() == 1


def test_set_device_same_device_makes_no_runtime_call():
    torch.flagos.set_device(2)
    torch_fl.sim.reset_stats()
    torch.flagos.set_device(2)
    assert torch_fl.sim.stats()["set_device_calls"] == 0
    torch.flagos.set_device(3)
    assert torch_fl.sim.stats()["set_device_calls"] == 1


def test_device_context_manager_restores():
    torch.flagos.set_device(1)
    with torch.flagos.device(3):
        assert torch.flagos.current_device() == 3
    assert torch.flagos.current_device() == 1
    with pytest.raises(RuntimeError):
        with torch.flagos.device(2):
            raise RuntimeError("inside")
    assert torch.flagos.current_device() == 1


def test_current_device_is_per_thread():
    torch.flagos.set_device(3)
    seen = {}

    def worker(index):
        seen[(index, "start")] = torch.flagos.current_device()
        torch.flagos.set_device(index)
        seen[(index, "end")] = torch.flagos.current_device()

    threads = [threading.Thread(target=worker, args=(i,)) for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {(1, "start"): 0, (1, "end"): 1, (2, "start"): 0, (2, "end"): 2}
    assert torch.flagos.current_device() == 3


def test_accelerator_api():
    assert torch.accelerator.current_accelerator() == torch.device("flagos")
    assert torch.accelerator.device_count() == 4
    torch.accelerator.set_device_index(2)
    assert torch.accelerator.current_device_index() == 2
    assert torch.flagos.current_device() == 2
    with torch.accelerator.device_index(1):
        assert torch.flagos.current_device() == 1
    assert torch.flagos.current_device() == 2
    torch.accelerator.synchronize()


def test_streams_belong_to_their_device():
    default = torch.flagos.default_stream(2)
    assert default.device == torch.device("flagos", 2)
    assert torch.flagos.current_stream(2) == default
    created = torch.Stream(device="flagos:3")
    assert created.device == torch.device("flagos", 3)
    assert created != torch.flagos.default_stream(3)
    with torch.flagos.stream(created):
        assert torch.flagos.current_stream(3) == created
        assert torch.flagos.current_stream(2) == default
    assert torch.flagos.current_stream(3) == torch.flagos.default_stream(3)
    created.synchronize()
    torch.flagos.synchronize(3)


def test_synchronize_leaves_current_device():
    torch.flagos.set_device(1)
    torch.flagos.synchronize(3)
    torch.flagos.synchronize("flagos:2")
    assert torch.flagos.current_device() == 1


def test_tensor_methods_from_rename():
    x = torch.ones(3).flagos(2)
    assert x.is_flagos
    assert x.device == torch.device("flagos", 2)
    assert not torch.ones(1).is_flagos


def _import_with_env(**env):
    import os

    full_env = dict(os.environ, **env)
    return subprocess.run(
        [sys.executable, "-c", "import torch_fl, torch; print(torch.flagos.device_count())"],
        capture_output=True, text=True, env=full_env, timeout=120,
    )


@pytest.mark.parametrize("value", ["0", "abc", "17"])
def test_bad_device_count_fails_at_import(value):
    result = _import_with_env(FLAGOS_SIM_DEVICES=value)
    assert result.returncode != 0
    assert "FLAGOS_SIM_DEVICES" in result.stderr
    assert f"'{value}'" in result.stderr


def test_device_count_from_env():
    result = _import_with_env(FLAGOS_SIM_DEVICES="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"


def test_process_exits_cleanly_after_backward_on_a_device():
    # Regression: an autograd worker of a flagos device used to abort the
    # process at interpreter exit (see torch_fl/__init__.py).
    code = (
        "import torch, torch_fl\n"
        "x = torch.ones(3, device='flagos:1', requires_grad=True)\n"
        "(x * 2).sum().backward()\n"
    )
    for _ in range(5):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr


# ASCEND_RT_VISIBLE_DEVICES, as CANN's runtime reads it (Runtime::GetVisibleDevices,
# hicann/runtime src/runtime/core/src/runtime.cc): the listed ids, up to the
# first character, empty field or id the machine lacks; ascending, no repeats.
@pytest.mark.parametrize("value,count", [
    ("1,3", 2), ("2", 1), ("0,1,2,3", 4),
    ("1,3,8", 2),  # 8 is not a device of the 4: the list ends before it
    ("1, 2", 1),  # a space ends the list
    ("1,,2", 1),  # so does an empty field
])
def test_visible_devices(value, count):
    result = _import_with_env(FLAGOS_SIM_DEVICES="4", ASCEND_RT_VISIBLE_DEVICES=value)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(count)


@pytest.mark.parametrize("value,why", [
    ("3,1", "ascending order"), ("1,1", "cannot be duplicated"), ("", "names no device"),
    ("a", "names no device"), ("9", "names no device"),
])
def test_bad_visible_devices_leave_no_device(value, why):
    result = _import_with_env(FLAGOS_SIM_DEVICES="4", ASCEND_RT_VISIBLE_DEVICES=value)
    assert result.returncode != 0
    assert "ASCEND_RT_VISIBLE_DEVICES" in result.stderr and why in result.stderr


def test_visible_devices_are_numbered_from_zero():
    code = ("import torch, torch_fl\nx = torch.ones(2, device='flagos:1') * 3\n"
            "print(torch.flagos.device_count(), x.device, x.cpu().tolist())")
    import os

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, FLAGOS_SIM_DEVICES="4", ASCEND_RT_VISIBLE_DEVICES="2,3"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2 flagos:1 [3.0, 3.0]"
    bad = subprocess.run([sys.executable, "-c", "import torch, torch_fl; torch.ones(1, device='flagos:2')"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, FLAGOS_SIM_DEVICES="4", ASCEND_RT_VISIBLE_DEVICES="2,3"))
    assert bad.returncode != 0 and "there are 2 flagos devices" in bad.stderr, bad.stderr
