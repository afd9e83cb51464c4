"""Smoke test of `python -m benchmarks --quick`: it runs and writes every
field. Timings are never judged here: they depend on the machine."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch_fl")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_quick_run_writes_every_field(tmp_path):
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "guard_overhead_ratio" in done.stdout

    results = json.loads(out.read_text())
    assert results["mode"] == "quick"
    for key in ("guard_overhead_ratio", "guard_overhead_ns", "guard_set_device_calls", "date", "settings"):
        assert key in results
    assert isinstance(results["guard_overhead_ratio"], float)
    for key in ("cpu_model", "cores", "python", "torch"):
        assert key in results["machine"]

    host = results["figures"]["host"]
    same = host["same_device"]
    for variant in ("guards_on", "guards_off", "python_set_device_hook"):
        summary = same["variants"][variant]["ns_per_op"]
        assert {"median", "min", "max", "q1", "q3"} <= set(summary) and summary["n"] >= 5
    assert "set_device_calls_guards_on" in same
    assert "c10_device_guard_ratio" in host["cpp_loops"] or "status" in host["cpp_loops"]
    assert "set_device_calls_per_op" in host["cross_device"] or "status" in host["cross_device"]
    assert set(host["launch_path"]["flagos_vs_cpu"]) == {"add", "mul", "relu", "sum"}
    assert "scalar_miss_vs_hit" in host["executor_cache"]
    rates = results["figures"]["cache_hit_rates"]
    counts = {"launches", "hits", "misses", "evictions", "hit_rate", "misses_by_operator"}
    for loop in ("adamw_training", "adamw_training_linear_schedule", "adamw_training_fused",
                 "adamw_training_fused_linear_schedule", "adamw_training_single_tensor", "cyclic_shapes",
                 "cyclic_shapes_lru"):
        assert counts <= set(rates[loop]), loop
        assert sum(rates[loop]["misses_by_operator"].values()) == rates[loop]["misses"], loop
    assert "llama_decode_dynamic_cache" in rates
    if "skipped" not in rates["llama_decode_dynamic_cache"]:
        assert counts <= set(rates["llama_decode_dynamic_cache"]["first_call_decode_steps"])
    parts = host["breakdown"]["ops"]
    assert set(parts) == {"add_4", "add_scalar_4", "relu_4", "mm_16x16", "softmax_8x64", "add_1m",
                          "transformer_layer"}
    for name, op in parts.items():
        assert {"flagos", "cpu", "flagos_probed"} == set(op["ns_per_op"])
        assert {"dispatch_entry", "wrapper", "arg_conversion", "cache_lookup", "phase_one", "launch_other",
                "simulator", "layer", "layer_net_of_probes"} <= set(op["phases_ns_per_op"])
        assert "median" in op["flagos_vs_cpu"]
        # Every timed flagos op entered a kernel and launched (the probes saw it).
        assert op["per_op_counts"]["kernels"] >= 1 and op["per_op_counts"]["launches"] >= 1, (name, op)
        assert op["per_op_counts"]["set_device_calls"] == 0, (name, op)

    generator = results["figures"]["generator"]
    for run in ("real_full", "real_noop", "real_check", "synthetic_full", "synthetic_noop", "synthetic_check"):
        assert "median" in generator["runs"][run]["seconds"]
    assert "real_noop_files_written" in generator and "synthetic_noop_files_written" in generator
    assert generator["synthetic_registry"]["ops"] > generator["synthetic_registry"]["ops_real"]

    build = results["figures"]["build"]
    assert build["generated_translation_units"]["count"] >= 1
    assert "largest_unit_compile" in build
    assert "files_written" in build["one_op_change"] or "status" in build["one_op_change"]
