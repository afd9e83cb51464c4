// Upstream's first design, for comparison: an unconditional c10::DeviceGuard
// around every op. Nothing is registered with the dispatcher; the loops run
// in C++ so that the guard's own cost is not hidden behind Python's, and
// the single-op functions give the Python-side comparison.
//
// Run these with torch_fl's injected guards switched off
// (torch_fl._C._set_guards_enabled(False)) to see the c10::DeviceGuard
// alone, and with them on to compare against the project's guard.

#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/utils/pybind.h>

#include <chrono>
#include <cstdint>

namespace {

using Clock = std::chrono::steady_clock;

int64_t elapsed_ns(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// n times `at::add(x, y)`; returns the elapsed nanoseconds.
int64_t loop_plain(const at::Tensor& x, const at::Tensor& y, int64_t n) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    at::Tensor out = at::add(x, y);
  }
  return elapsed_ns(start);
}

// n times `{ c10::DeviceGuard g(x.device()); at::add(x, y); }`.
int64_t loop_device_guard(const at::Tensor& x, const at::Tensor& y, int64_t n) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    c10::DeviceGuard guard(x.device());
    at::Tensor out = at::add(x, y);
  }
  return elapsed_ns(start);
}

// n times `{ c10::DeviceGuard g(x.device()); }`: the guard alone. The
// barrier makes every iteration read the tensor again.
int64_t loop_guard_only(const at::Tensor& x, int64_t n) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    c10::DeviceGuard guard(x.device());
    asm volatile("" ::: "memory");
  }
  return elapsed_ns(start);
}

at::Tensor add_plain(const at::Tensor& x, const at::Tensor& y) { return at::add(x, y); }

at::Tensor add_device_guard(const at::Tensor& x, const at::Tensor& y) {
  c10::DeviceGuard guard(x.device());
  return at::add(x, y);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("loop_plain", &loop_plain);
  m.def("loop_device_guard", &loop_device_guard);
  m.def("loop_guard_only", &loop_guard_only);
  m.def("add_plain", &add_plain);
  m.def("add_device_guard", &add_device_guard);
}
