// The project's guard alone: flagos::LaunchGuard (runtime/launch.h) on the
// launch device of (x, y), with no op, to set beside c10::DeviceGuard alone
// (device_guard_bench.cpp). Built against libflagos_backend.so, whose
// thread-local current device it shares.

#include <ATen/core/Tensor.h>
#include <torch/csrc/utils/pybind.h>

#include <chrono>
#include <cstdint>

#include "runtime/launch.h"

namespace {

using Clock = std::chrono::steady_clock;

// n times `{ LaunchGuard g(launch_device_of(x, y)); }`; the barrier makes
// every iteration read the tensors and the current device again.
int64_t loop_launch_guard_only(const at::Tensor& x, const at::Tensor& y, int64_t n) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    const flagos::LaunchGuard guard(flagos::launch_device_of(x, y));
    asm volatile("" ::: "memory");
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("loop_launch_guard_only", &loop_launch_guard_only); }
