// The device a launch runs on, and the guards that make it current.
//
// A kernel resolves its launch device from its arguments by its guard policy
// (launch_device_of), allocates its outputs there (empty_on) and launches
// under a LaunchGuard (through FLAGOS_GUARDED_LAUNCH, runtime/launch.h); a
// composite op makes its device current once with a CompositeGuard. The
// same-device and overlap checks that generated wrappers call are here too.
#pragma once

#include <ATen/core/IListRef.h>
#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <atomic>
#include <initializer_list>
#include <optional>
#include <vector>

#include "runtime/device.h"

namespace flagos {

// ---- the launch device -------------------------------------------------

// The device a kernel launches on, resolved from its arguments by its guard
// policy; empty for policy `none` (the launch then runs on the current device).
struct LaunchDevice {
  c10::DeviceIndex index = -1;
  bool has_value() const { return index >= 0; }
};

namespace detail {
inline bool take_device(LaunchDevice& out, const LaunchDevice& device) {
  out = device;
  return device.has_value();
}
inline bool take_device(LaunchDevice& out, const at::Tensor& tensor) {
  // CPU tensors (wrapped numbers, CPU indices) never decide the device.
  if (!tensor.defined() || !tensor.device().is_privateuseone()) {
    return false;
  }
  out.index = tensor.device().index();
  return true;
}
inline bool take_device(LaunchDevice& out, const std::optional<at::Tensor>& tensor) {
  return tensor.has_value() && take_device(out, *tensor);
}
inline bool take_device(LaunchDevice& out, at::TensorList tensors) {
  for (const at::Tensor& tensor : tensors) {
    if (take_device(out, tensor)) {
      return true;
    }
  }
  return false;
}
inline bool take_device(LaunchDevice& out, const std::vector<at::Tensor>& tensors) {
  return take_device(out, at::TensorList(tensors));
}
inline bool take_device(LaunchDevice& out, const at::ITensorListRef& tensors) {
  for (const at::Tensor& tensor : tensors) {
    if (take_device(out, tensor)) {
      return true;
    }
  }
  return false;
}
inline bool take_device(LaunchDevice& out, c10::Device device) {
  if (!device.is_privateuseone()) {
    return false;
  }
  out.index = device.has_index() ? device.index() : current_device();
  return true;
}
inline bool take_device(LaunchDevice& out, const std::optional<c10::Device>& device) {
  // A factory op without a device argument runs on the current device.
  return take_device(out, device.value_or(c10::Device(c10::DeviceType::PrivateUse1)));
}
}  // namespace detail

// The first argument, in the order given, that names a flagos device.
template <typename... Sources>
LaunchDevice launch_device_of(const Sources&... sources) {
  LaunchDevice device;
  (detail::take_device(device, sources) || ...);
  return device;
}

inline LaunchDevice no_launch_device() { return {}; }

// ---- the guard -----------------------------------------------------------

namespace detail {
extern std::atomic<bool> guards_enabled;
}  // namespace detail

// Diagnostic switch, for negative-control tests and overhead benchmarks
// only: with guards off, kernels launch on the ambient current device, as
// upstream did.
void set_guards_enabled(bool enabled);
inline bool guards_enabled() { return detail::guards_enabled.load(std::memory_order_relaxed); }

// Makes the launch device current for its scope and restores the previous
// device on exit, exceptions included. When the device already matches it
// does nothing: no runtime call, no lookup.
class LaunchGuard {
 public:
  explicit LaunchGuard(const LaunchDevice& target) : device_(current_device()) {
    if (target.has_value() && target.index != device_ && guards_enabled()) {
      set_device(target.index);
      previous_ = device_;
      device_ = target.index;
    }
  }
  ~LaunchGuard() {
    if (previous_ >= 0) {
      restore();
    }
  }
  LaunchGuard(const LaunchGuard&) = delete;
  LaunchGuard& operator=(const LaunchGuard&) = delete;

  // The device the launch runs on: the thread's current device in scope.
  c10::DeviceIndex device() const { return device_; }

 private:
  void restore() noexcept;

  c10::DeviceIndex device_;
  c10::DeviceIndex previous_ = -1;
};

// The guard at the boundary of a composite op (one that decomposes into
// other flagos ops: rms_norm, linear, attention's math path, the foreach
// slow paths). It makes the op's device current once, so that each inner
// op's own LaunchGuard finds it current and makes no runtime call: 2
// set-device calls for the whole op on another device instead of 2 per
// inner launch, 0 on the current device. The inner guards stay: they keep
// every launch correct whatever the boundary did (a tensor list spanning
// devices, the switch below turned off).
namespace detail {
extern std::atomic<bool> composite_guards_enabled;
}  // namespace detail

// Diagnostic switch for the negative control: with composite guards off, a
// composite pays its inner ops' guards (one switch and restore per launch).
void set_composite_guards_enabled(bool enabled);
inline bool composite_guards_enabled() {
  return detail::composite_guards_enabled.load(std::memory_order_relaxed);
}

class CompositeGuard {
 public:
  explicit CompositeGuard(const LaunchDevice& target) {
    if (target.has_value() && composite_guards_enabled() && guards_enabled()) {
      const c10::DeviceIndex current = current_device();
      if (target.index != current) {
        set_device(target.index);
        previous_ = current;
      }
    }
  }
  ~CompositeGuard() {
    if (previous_ >= 0) restore();
  }
  CompositeGuard(const CompositeGuard&) = delete;
  CompositeGuard& operator=(const CompositeGuard&) = delete;

 private:
  void restore() noexcept;

  c10::DeviceIndex previous_ = -1;
};

// ---- checks and outputs --------------------------------------------------

// One argument of a same-device check.
struct DeviceCheckArg {
  DeviceCheckArg(const char* name, const at::Tensor& tensor) : name(name), tensors(tensor) {}
  DeviceCheckArg(const char* name, const std::optional<at::Tensor>& tensor)
      : name(name), tensors(tensor.has_value() ? at::TensorList(*tensor) : at::TensorList()) {}
  DeviceCheckArg(const char* name, at::TensorList tensors) : name(name), tensors(tensors) {}

  const char* name;
  at::TensorList tensors;
};

// Raises PyTorch's "Expected all tensors to be on the same device" error
// unless every defined tensor is on one device; CPU 0-dim tensors (wrapped
// numbers) are allowed anywhere, as on CUDA.
void check_same_device(const char* op, std::initializer_list<DeviceCheckArg> args);

// What ATen's kernels refuse of a tensor they write (their TensorIterator,
// or their impl): one that overlaps itself (an expanded tensor) or that
// partially overlaps an input (at::assert_no_internal_overlap,
// at::assert_no_partial_overlap). An input that is the written tensor
// itself (in place) is fine. Generated wrappers of out= and in-place ops
// call it; a structured op's TensorIterator meta function makes the same
// checks itself.
void check_written(const at::Tensor& written, std::initializer_list<DeviceCheckArg> inputs);

// A CPU 0-dim tensor: a Python number that reached a Tensor overload. It
// must be passed to ACLNN as an aclScalar, never as a device address.
inline bool is_cpu_scalar(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().is_cpu() && tensor.dim() == 0;
}

// ACLNN reads device memory only: a CPU tensor that reached a kernel (a
// Python number, a CPU index tensor) is copied to the launch device; a
// flagos tensor passes as it is.
inline at::Tensor on_launch_device(const at::Tensor& tensor, const LaunchDevice& device) {
  if (!tensor.defined() || tensor.is_privateuseone()) {
    return tensor;
  }
  return tensor.to(flagos_device(device.has_value() ? device.index : current_device()));
}

// A contiguous tensor on the launch device (the current device for `none`).
at::Tensor empty_on(const LaunchDevice& device, at::IntArrayRef sizes, at::ScalarType dtype);

}  // namespace flagos
