"""The runtime library on its own, through ctypes, as torch_fl.sim will load it:
it must load without torch and answer the C API."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "torch_fl" / "lib" / "libflagos_sim_runtime.so"

pytestmark = pytest.mark.skipif(
    not RUNTIME.exists(), reason=f"{RUNTIME} is not built (build csrc/sim, see csrc/sim/README.md)"
)

# Runs in a fresh interpreter: the runtime reads FLAGOS_SIM_* once per process.
SCRIPT = textwrap.dedent(
    """
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1])
    lib.aclGetRecentErrMsg.restype = ctypes.c_char_p
    lib.fsimStatsJson.restype = ctypes.c_char_p
    lib.fsimPointerDevice.argtypes = [ctypes.c_void_p]
    lib.aclrtMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int]
    lib.aclrtFree.argtypes = [ctypes.c_void_p]
    lib.aclrtMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    out = {}
    count = ctypes.c_uint32()
    out["count_rc"] = lib.aclrtGetDeviceCount(ctypes.byref(count))
    out["count"] = count.value
    device = ctypes.c_int32(-1)
    out["get_before_set"] = lib.aclrtGetDevice(ctypes.byref(device))
    out["set"] = lib.aclrtSetDevice(2)
    lib.aclrtGetDevice(ctypes.byref(device))
    out["device"] = device.value
    ptr = ctypes.c_void_p()
    out["malloc"] = lib.aclrtMalloc(ctypes.byref(ptr), 8, 0)
    out["pointer_device"] = lib.fsimPointerDevice(ptr)
    src = ctypes.c_double(3.25)
    dst = ctypes.c_double(0)
    out["h2d"] = lib.aclrtMemcpy(ptr, 8, ctypes.addressof(src), 8, 1)
    out["d2h"] = lib.aclrtMemcpy(ctypes.addressof(dst), 8, ptr, 8, 2)
    out["value"] = dst.value
    out["wrong_kind"] = lib.aclrtMemcpy(ctypes.addressof(dst), 8, ptr, 8, 1)
    out["wrong_kind_message"] = lib.aclGetRecentErrMsg().decode()
    out["stats"] = json.loads(lib.fsimStatsJson())
    out["free"] = lib.aclrtFree(ptr)
    out["torch_loaded"] = any("libtorch" in line or "libc10" in line for line in open("/proc/self/maps"))
    print(json.dumps(out))
    """
)


def test_runtime_through_ctypes_without_torch():
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_SIM_")}
    environ["FLAGOS_SIM_PROTECT"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(RUNTIME)], env=environ, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["count_rc"] == 0 and out["count"] == 4
    assert out["get_before_set"] == 107002  # ACL_ERROR_RT_CONTEXT_NULL
    assert out["set"] == 0 and out["device"] == 2
    assert out["malloc"] == 0 and out["pointer_device"] == 2
    assert out["h2d"] == 0 and out["d2h"] == 0 and out["value"] == 3.25
    assert out["wrong_kind"] == 107000  # ACL_ERROR_RT_PARAM_INVALID: CANN's driver decides, see docs
    assert "ACL_MEMCPY_HOST_TO_DEVICE" in out["wrong_kind_message"]
    assert out["stats"]["live_allocations"] == {"0": 0, "1": 0, "2": 1, "3": 0}
    assert out["stats"]["live_bytes"]["2"] == 8
    assert out["stats"]["set_device_calls"] == 1
    assert out["free"] == 0
    assert not out["torch_loaded"]
