// The one guarded launch path of every ACLNN kernel, generated or handwritten.
//
//   const flagos::LaunchDevice device = flagos::launch_device_of(self, other);
//   at::Tensor out = flagos::empty_on(device, sizes, dtype);
//   FLAGOS_GUARDED_LAUNCH(device, aclnnAdd, self, other, alpha, out);
//
// FLAGOS_GUARDED_LAUNCH makes the launch device current for the duration of
// the launch (no runtime call when it already is), and the launch takes the
// stream, the workspace and the cached executor of that device: never of
// whatever device the thread happened to leave current. Entry points are
// called through pointers of their exact prototypes (generated/aclnn_ops.h);
// each argument is converted to the type of its parameter at compile time.
#pragma once

#include <ATen/core/IListRef.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/FunctionRef.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "flagos/acl_api.h"
#include "generated/aclnn_ops.h"
#include "runtime/device.h"
#include "runtime/opapi.h"

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

// ---- the launch ----------------------------------------------------------

// The launch-time device sanitizer (FLAGOS_DEVICE_CHECK=1): before phase 2,
// every tensor argument must live on the launch device, by the allocator's
// records.
void set_device_check_enabled(bool enabled);
bool device_check_enabled();

struct ExecutorCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
};
ExecutorCacheStats executor_cache_stats();
void reset_executor_cache_stats();
void set_executor_cache_enabled(bool enabled);

aclDataType to_acl_dtype(at::ScalarType dtype);

// The ACLNN arguments of one launch: owns the acl objects made from ATen
// values, records the tensors for the sanitizer and the executor cache, and
// builds the argument signature that keys the cache.
class LaunchArgs {
 public:
  LaunchArgs(const char* api, const char* arg_names) : api_(api), arg_names_(arg_names) {}
  ~LaunchArgs();
  LaunchArgs(const LaunchArgs&) = delete;
  LaunchArgs& operator=(const LaunchArgs&) = delete;

  template <typename Param, typename Arg>
  Param to(const Arg& arg);

  struct TensorArg {
    int position;       // which launch argument
    void* data;         // storage start
    bool is_output;     // a non-const aclTensor* parameter
  };
  const std::vector<TensorArg>& tensors() const { return tensors_; }
  const std::string& signature() const { return signature_; }
  const char* api() const { return api_; }
  // The source text of argument `position` (from the macro), for messages.
  std::string arg_name(int position) const;

 private:
  aclTensor* tensor(const at::Tensor& tensor, bool is_output);
  aclScalar* scalar(const c10::Scalar& scalar);
  aclIntArray* int_array(at::IntArrayRef values);
  aclBoolArray* bool_array(const bool* values, size_t size);
  aclTensorList* tensor_list(at::TensorList tensors, bool is_output);
  char* text(std::string_view value);
  template <typename T>
  void sign(const T& value) {
    signature_.append(reinterpret_cast<const char*>(&value), sizeof(value));
  }
  // Every pointer argument's signature starts with a presence tag, so that
  // clamp(x, min) and clamp(x, max=...) never share a cached executor.
  static constexpr uint8_t kAbsent = 0;
  static constexpr uint8_t kPresent = 1;
  template <typename Param>
  Param absent() {
    sign(kAbsent);
    return nullptr;
  }

  const char* api_;
  const char* arg_names_;
  int position_ = 0;
  std::vector<TensorArg> tensors_;
  std::string signature_;
  std::vector<const aclTensor*> owned_tensors_;
  std::vector<const aclScalar*> owned_scalars_;
  std::vector<const aclIntArray*> owned_int_arrays_;
  std::vector<const aclBoolArray*> owned_bool_arrays_;
  std::vector<const aclTensorList*> owned_tensor_lists_;
  std::deque<std::string> owned_texts_;  // a deque keeps each string's address
};

using PhaseTwoFn = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);
using PhaseOneCall = c10::function_ref<aclnnStatus(uint64_t*, aclOpExecutor**)>;

// Runs both phases on `device` (the guarded current device): executor cache,
// workspace on that device, that device's current stream, sanitizer, errors.
void run_two_phases(LaunchArgs& args, c10::DeviceIndex device, const void* entry_key,
                    PhaseOneCall phase_one, PhaseTwoFn phase_two);

namespace detail {

template <typename T>
inline constexpr bool always_false = false;

// The parameters of a phase-1 entry point, less its trailing
// (uint64_t* workspaceSize, aclOpExecutor** executor).
template <typename Fn>
struct PhaseOneParams;
template <typename... All>
struct PhaseOneParams<aclnnStatus (*)(All...)> {
  static constexpr size_t count = sizeof...(All) - 2;
  template <size_t I>
  using param = std::tuple_element_t<I, std::tuple<All...>>;
  static_assert(std::is_same_v<param<count>, uint64_t*> &&
                    std::is_same_v<param<count + 1>, aclOpExecutor**>,
                "a phase-1 ACLNN entry point ends with (uint64_t*, aclOpExecutor**)");
};

}  // namespace detail

// An ACLNN operator's two entry points, resolved once from the operator
// library and kept as pointers of their exact types.
template <typename PhaseOne, typename PhaseTwo>
class OpApi {
  static_assert(std::is_same_v<PhaseTwo, PhaseTwoFn>,
                "a phase-2 ACLNN entry point is (void*, uint64_t, aclOpExecutor*, aclrtStream)");

 public:
  explicit OpApi(const char* name)
      : name_(name),
        phase_one_(reinterpret_cast<PhaseOne>(opapi_symbol((std::string(name) + "GetWorkspaceSize").c_str()))),
        phase_two_(reinterpret_cast<PhaseTwo>(opapi_symbol(name))) {}

  const char* name() const { return name_; }
  PhaseOne phase_one() const { return phase_one_; }
  PhaseTwo phase_two() const { return phase_two_; }

 private:
  const char* name_;
  PhaseOne phase_one_;
  PhaseTwo phase_two_;
};

template <typename PhaseOne, typename PhaseTwo, typename... Args, size_t... I>
void launch_with(const OpApi<PhaseOne, PhaseTwo>& api, c10::DeviceIndex device,
                 const char* arg_names, std::index_sequence<I...>, const Args&... args) {
  using Params = detail::PhaseOneParams<PhaseOne>;
  LaunchArgs launch_args(api.name(), arg_names);
  // Braced initialization converts the arguments left to right, which fixes
  // the input/output numbering of the executor.
  const std::tuple<typename Params::template param<I>...> converted{
      launch_args.template to<typename Params::template param<I>>(args)...};
  const PhaseOne phase_one = api.phase_one();
  run_two_phases(
      launch_args, device, reinterpret_cast<const void*>(phase_one),
      [&](uint64_t* workspace_size, aclOpExecutor** executor) {
        return phase_one(std::get<I>(converted)..., workspace_size, executor);
      },
      api.phase_two());
}

template <typename PhaseOne, typename PhaseTwo, typename... Args>
void launch(const OpApi<PhaseOne, PhaseTwo>& api, c10::DeviceIndex device, const char* arg_names,
            const Args&... args) {
  static_assert(detail::PhaseOneParams<PhaseOne>::count == sizeof...(Args),
                "the launch passes a different number of arguments than the ACLNN prototype has");
  launch_with(api, device, arg_names, std::index_sequence_for<Args...>{}, args...);
}

// ---- argument conversion -----------------------------------------------

template <typename Param, typename Arg>
Param LaunchArgs::to(const Arg& arg) {
  using A = std::decay_t<Arg>;
  const int position = position_++;
  (void)position;
  if constexpr (std::is_same_v<Param, const aclTensor*> || std::is_same_v<Param, aclTensor*>) {
    constexpr bool is_output = std::is_same_v<Param, aclTensor*>;
    if constexpr (std::is_same_v<A, at::Tensor>) {
      return arg.defined() ? tensor(arg, is_output) : absent<Param>();
    } else if constexpr (std::is_same_v<A, std::optional<at::Tensor>>) {
      return arg.has_value() && arg->defined() ? tensor(*arg, is_output) : absent<Param>();
    } else {
      static_assert(detail::always_false<A>,
                    "an aclTensor parameter takes at::Tensor or std::optional<at::Tensor>");
    }
  } else if constexpr (std::is_same_v<Param, const aclScalar*>) {
    if constexpr (std::is_same_v<A, c10::Scalar> || std::is_arithmetic_v<A>) {
      return scalar(c10::Scalar(arg));
    } else if constexpr (std::is_same_v<A, std::optional<c10::Scalar>>) {
      return arg.has_value() ? scalar(*arg) : absent<Param>();
    } else {
      static_assert(detail::always_false<A>, "an aclScalar parameter takes a c10::Scalar");
    }
  } else if constexpr (std::is_same_v<Param, const aclIntArray*>) {
    if constexpr (std::is_same_v<A, at::IntArrayRef> || std::is_same_v<A, std::vector<int64_t>>) {
      return int_array(arg);
    } else if constexpr (std::is_same_v<A, at::OptionalIntArrayRef>) {
      return arg.has_value() ? int_array(*arg) : absent<Param>();
    } else {
      static_assert(detail::always_false<A>, "an aclIntArray parameter takes at::IntArrayRef");
    }
  } else if constexpr (std::is_same_v<Param, const aclBoolArray*>) {
    // bool[N] of a schema (output_mask) arrives as std::array<bool, N>.
    static_assert(std::is_same_v<typename A::value_type, bool>, "an aclBoolArray parameter takes std::array<bool, N>");
    return bool_array(arg.data(), arg.size());
  } else if constexpr (std::is_same_v<Param, const aclTensorList*> ||
                       std::is_same_v<Param, aclTensorList*>) {
    constexpr bool is_output = std::is_same_v<Param, aclTensorList*>;
    if constexpr (std::is_same_v<A, at::TensorList> || std::is_same_v<A, std::vector<at::Tensor>>) {
      return tensor_list(arg, is_output);
    } else {
      static_assert(detail::always_false<A>, "an aclTensorList parameter takes at::TensorList");
    }
  } else if constexpr (std::is_same_v<Param, char*>) {
    static_assert(std::is_convertible_v<A, std::string_view>, "a char* parameter takes a string");
    return text(std::string_view(arg));
  } else if constexpr (std::is_same_v<Param, aclDataType>) {
    static_assert(std::is_same_v<A, at::ScalarType>, "an aclDataType parameter takes at::ScalarType");
    const aclDataType dtype = to_acl_dtype(arg);
    sign(dtype);
    return dtype;
  } else if constexpr (std::is_arithmetic_v<Param>) {
    static_assert(std::is_arithmetic_v<A>, "an arithmetic parameter takes an arithmetic value");
    const Param value = static_cast<Param>(arg);
    sign(value);
    return value;
  } else {
    static_assert(detail::always_false<Param>, "no conversion to this ACLNN parameter type");
  }
}

}  // namespace flagos

// Guards on `device_source` (a LaunchDevice, tensor, tensor list or device),
// then launches `aclnn_api` with the remaining arguments in prototype order.
// The one way a kernel launches an ACLNN operator; `python -m codegen --check`
// rejects handwritten launches that bypass it.
#define FLAGOS_GUARDED_LAUNCH(device_source, aclnn_api, ...)                                  \
  do {                                                                                        \
    static const ::flagos::OpApi<decltype(&aclnn_api##GetWorkspaceSize), decltype(&aclnn_api)> \
        flagos_op_api_(#aclnn_api);                                                           \
    const ::flagos::LaunchGuard flagos_launch_guard_(::flagos::launch_device_of(device_source)); \
    ::flagos::launch(flagos_op_api_, flagos_launch_guard_.device(), #__VA_ARGS__, __VA_ARGS__); \
  } while (false)
