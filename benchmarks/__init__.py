"""torch_fl benchmarks: `python -m benchmarks [--json PATH] [--quick]`.

Modules: timing (interleaved repetitions, summaries), host (per-op host
time), guard_ext (the C++ helpers: c10::DeviceGuard and flagos::LaunchGuard loops),
executor_cache (cache hit rates of steady loops), generator (`python -m
codegen` timings), build (translation units, compile
time, one-op change), report (machine, table). See docs/performance.md.
"""
