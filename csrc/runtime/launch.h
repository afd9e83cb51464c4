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
// called through pointers of their exact prototypes
// (generated/aclnn/<operator>.h, which the kernel includes); each argument is
// converted to the type of its parameter at compile time, and whether the
// operator writes it comes from the registry, not from its constness.
#pragma once

#include <ATen/core/IListRef.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>
#include <c10/util/FunctionRef.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "flagos/acl_api.h"
#include "runtime/device.h"
#include "runtime/opapi.h"
#include "runtime/phases.h"

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
  uint64_t rebinds = 0;  // aclSetInputTensorAddr / aclSetOutputTensorAddr calls of hits
};
ExecutorCacheStats executor_cache_stats();
void reset_executor_cache_stats();
void set_executor_cache_enabled(bool enabled);

aclDataType to_acl_dtype(at::ScalarType dtype);
// False for the dtypes CANN has no aclDataType for (see to_acl_dtype).
bool has_acl_dtype(at::ScalarType dtype);

// An ACLNN operator rejected a launch at phase 1 with ACLNN_ERR_PARAM_INVALID
// while one of its arguments had a dtype outside the set every operator
// takes (float, float16, bfloat16, int32, int64) or more than 8 dims (CANN's
// MAX_SUPPORT_DIMS_NUMS): the operator most likely does not take that
// argument. The registration wrapper of the ATen op that launched it
// (aten/dtype_fallback.h) catches this and runs the op on the CPU for this
// call, counted and warned like any CPU fallback. `tag` names what the
// operator does not take: a dtype ("UInt16") or a rank ("9 dims").
class DtypeUnsupported : public c10::Error {
 public:
  DtypeUnsupported(std::string api, std::string tag, const std::string& message)
      : c10::Error(message), api_(std::move(api)), tag_(std::move(tag)) {}
  const std::string& api() const { return api_; }
  const std::string& tag() const { return tag_; }

 private:
  std::string api_;
  std::string tag_;
};

// A tensor argument's storage address (the start of its storage, as
// aclCreateTensor and aclSetInputTensorAddr take it) and which launch
// argument it came from.
struct TensorAddress {
  void* data;
  int position;
};

// What a launch's arguments are, read without creating any ACLNN object:
// the signature (everything a cached executor depends on besides tensor
// addresses: dtypes, sizes, strides, offsets, scalar values, which optional
// arguments are absent) and the tensor addresses in the order in which
// nnopbase numbers an executor's inputs and outputs (argument order, list
// elements one by one, absent optionals skipped). A cache hit needs nothing
// more.
class LaunchRecord {
 public:
  LaunchRecord(const char* api, const char* arg_names) : api_(api), arg_names_(arg_names) {}
  LaunchRecord(const LaunchRecord&) = delete;
  LaunchRecord& operator=(const LaunchRecord&) = delete;

  template <typename Param, bool IsOutput, typename Arg>
  void add(int position, const Arg& arg);

  const char* api() const { return api_; }
  // The source text of argument `position` (from the macro), for messages.
  std::string arg_name(int position) const;
  const c10::SmallVectorImpl<TensorAddress>& inputs() const { return inputs_; }
  const c10::SmallVectorImpl<TensorAddress>& outputs() const { return outputs_; }
  const c10::SmallVectorImpl<uint8_t>& signature() const { return signature_; }
  // The first argument dtype outside float, float16, bfloat16, int32 and
  // int64 (a tensor's or a scalar's), if any: the suspect when phase 1
  // rejects the arguments (DtypeUnsupported).
  std::optional<at::ScalarType> uncommon_dtype() const { return uncommon_dtype_; }
  // The most dims of a tensor argument.
  int64_t max_dims() const { return max_dims_; }

  // The argument visitor (see visit_argument): signs each value.
  int tensor(const at::Tensor& tensor);
  int tensor_list(at::TensorList tensors);
  int scalar(const c10::Scalar& scalar);
  int int_array(at::IntArrayRef values);
  int bool_array(const bool* values, size_t size);
  int text(std::string_view value);
  int dtype(at::ScalarType dtype);
  template <typename T>
  int number(T value) {
    sign(value);
    return 0;
  }
  int absent() {
    sign(kAbsent);
    return 0;
  }

 private:
  template <typename T>
  void sign(const T& value) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
    signature_.append(bytes, bytes + sizeof(value));
  }
  // Every pointer argument's signature starts with a presence tag, so that
  // clamp(x, min) and clamp(x, max=...) never share a cached executor.
  static constexpr uint8_t kAbsent = 0;
  static constexpr uint8_t kPresent = 1;

  void note_dtype(at::ScalarType dtype);

  const char* api_;
  const char* arg_names_;
  int position_ = 0;
  bool is_output_ = false;
  std::optional<at::ScalarType> uncommon_dtype_;
  int64_t max_dims_ = 0;
  c10::SmallVector<TensorAddress, 8> inputs_;
  c10::SmallVector<TensorAddress, 4> outputs_;
  c10::SmallVector<uint8_t, 512> signature_;
};

// The ACLNN argument objects (aclCreateTensor & co.) of one phase 1. They
// are made only when phase 1 runs: on a cache miss. nnopbase's executors use
// the very aclTensor objects they were built with, and rebinding a cached
// executor updates those objects' addresses, so a cached executor keeps its
// BoundArgs alive until it is destroyed.
class BoundArgs {
 public:
  explicit BoundArgs(const LaunchRecord& record) : record_(&record) {}
  ~BoundArgs();
  BoundArgs(const BoundArgs&) = delete;
  BoundArgs& operator=(const BoundArgs&) = delete;

  template <typename Param, bool IsOutput, typename Arg>
  Param to(int position, const Arg& arg);

  // The tensor handles in the executor's input and output order.
  const std::vector<aclTensor*>& inputs() const { return inputs_; }
  const std::vector<aclTensor*>& outputs() const { return outputs_; }
  // Forgets the record: a cached BoundArgs outlives the launch that made it.
  void detach() { record_ = nullptr; }

  // The argument visitor (see visit_argument): makes each object.
  aclTensor* tensor(const at::Tensor& tensor);
  aclTensorList* tensor_list(at::TensorList tensors);
  aclScalar* scalar(const c10::Scalar& scalar);
  aclIntArray* int_array(at::IntArrayRef values);
  aclBoolArray* bool_array(const bool* values, size_t size);
  char* text(std::string_view value);
  aclDataType dtype(at::ScalarType dtype) { return to_acl_dtype(dtype); }
  template <typename T>
  T number(T value) {
    return value;
  }
  std::nullptr_t absent() { return nullptr; }

 private:
  aclTensor* make_tensor(const at::Tensor& tensor);

  const LaunchRecord* record_;
  int position_ = 0;
  bool is_output_ = false;
  std::vector<aclTensor*> inputs_;
  std::vector<aclTensor*> outputs_;
  std::vector<const aclTensor*> owned_tensors_;  // not list elements: a list owns those
  std::vector<const aclTensorList*> owned_tensor_lists_;
  std::vector<const aclScalar*> owned_scalars_;
  std::vector<const aclIntArray*> owned_int_arrays_;
  std::vector<const aclBoolArray*> owned_bool_arrays_;
  std::deque<std::string> owned_texts_;  // a deque keeps each string's address
};

using PhaseTwoFn = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);
using PhaseOneCall = c10::function_ref<aclnnStatus(BoundArgs&, uint64_t*, aclOpExecutor**)>;

// Runs a recorded launch on `device` (the guarded current device): the
// sanitizer, the executor cache (a hit rebinds the cached executor's own
// aclTensor objects to this launch's addresses; a miss runs `phase_one`),
// the workspace on that device, phase 2 on that device's current stream, and
// the errors. `entry` identifies the operator in the cache key.
void run_launch(const LaunchRecord& record, c10::DeviceIndex device, const void* entry,
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

template <typename Param>
inline constexpr bool is_tensor_param = std::is_same_v<Param, const aclTensor*> || std::is_same_v<Param, aclTensor*>;
template <typename Param>
inline constexpr bool is_tensor_list_param =
    std::is_same_v<Param, const aclTensorList*> || std::is_same_v<Param, aclTensorList*>;

// Hands one ATen value to the visitor method that fits the ACLNN parameter
// type `Param` (a static_assert names what does not fit). LaunchRecord and
// BoundArgs are the two visitors: one signs the value, one makes its object.
template <typename Param, typename Visitor, typename Arg>
auto visit_argument(Visitor& v, const Arg& arg) {
  using A = std::decay_t<Arg>;
  if constexpr (is_tensor_param<Param>) {
    if constexpr (std::is_same_v<A, at::Tensor>) {
      return arg.defined() ? v.tensor(arg) : v.absent();
    } else if constexpr (std::is_same_v<A, std::optional<at::Tensor>>) {
      return arg.has_value() && arg->defined() ? v.tensor(*arg) : v.absent();
    } else {
      static_assert(always_false<A>, "an aclTensor parameter takes at::Tensor or std::optional<at::Tensor>");
    }
  } else if constexpr (std::is_same_v<Param, const aclScalar*>) {
    if constexpr (std::is_same_v<A, c10::Scalar> || std::is_arithmetic_v<A>) {
      return v.scalar(c10::Scalar(arg));
    } else if constexpr (std::is_same_v<A, std::optional<c10::Scalar>>) {
      return arg.has_value() ? v.scalar(*arg) : v.absent();
    } else {
      static_assert(always_false<A>, "an aclScalar parameter takes a c10::Scalar");
    }
  } else if constexpr (std::is_same_v<Param, const aclIntArray*>) {
    if constexpr (std::is_same_v<A, at::IntArrayRef> || std::is_same_v<A, std::vector<int64_t>>) {
      return v.int_array(arg);
    } else if constexpr (std::is_same_v<A, at::OptionalIntArrayRef>) {
      return arg.has_value() ? v.int_array(*arg) : v.absent();
    } else {
      static_assert(always_false<A>, "an aclIntArray parameter takes at::IntArrayRef");
    }
  } else if constexpr (std::is_same_v<Param, const aclBoolArray*>) {
    // bool[N] of a schema (output_mask) arrives as std::array<bool, N>.
    static_assert(std::is_same_v<typename A::value_type, bool>, "an aclBoolArray parameter takes std::array<bool, N>");
    return v.bool_array(arg.data(), arg.size());
  } else if constexpr (is_tensor_list_param<Param>) {
    if constexpr (std::is_same_v<A, at::TensorList> || std::is_same_v<A, std::vector<at::Tensor>>) {
      return v.tensor_list(arg);
    } else {
      static_assert(always_false<A>, "an aclTensorList parameter takes at::TensorList");
    }
  } else if constexpr (std::is_same_v<Param, char*>) {
    static_assert(std::is_convertible_v<A, std::string_view>, "a char* parameter takes a string");
    return v.text(std::string_view(arg));
  } else if constexpr (std::is_same_v<std::remove_const_t<Param>, aclDataType>) {
    static_assert(std::is_same_v<A, at::ScalarType>, "an aclDataType parameter takes at::ScalarType");
    return v.dtype(arg);
  } else if constexpr (std::is_arithmetic_v<Param>) {
    static_assert(std::is_arithmetic_v<A>, "an arithmetic parameter takes an arithmetic value");
    return v.number(static_cast<std::remove_const_t<Param>>(arg));
  } else {
    static_assert(always_false<Param>, "no conversion to this ACLNN parameter type");
  }
}

}  // namespace detail

template <typename Param, bool IsOutput, typename Arg>
void LaunchRecord::add(int position, const Arg& arg) {
  position_ = position;
  is_output_ = IsOutput;
  detail::visit_argument<Param>(*this, arg);
}

template <typename Param, bool IsOutput, typename Arg>
Param BoundArgs::to(int position, const Arg& arg) {
  position_ = position;
  is_output_ = IsOutput;
  return static_cast<Param>(detail::visit_argument<Param>(*this, arg));
}

// An ACLNN operator's two entry points, resolved once from the operator
// library and kept as pointers of their exact types. `Op` is the operator's
// traits (generated/aclnn/<operator>.h).
template <typename Op>
class OpApi {
 public:
  using PhaseOne = typename Op::PhaseOne;

  static const OpApi& get() {
    static const OpApi api;
    return api;
  }
  PhaseOne phase_one() const { return phase_one_; }
  PhaseTwoFn phase_two() const { return phase_two_; }

 private:
  OpApi()
      : phase_one_(reinterpret_cast<PhaseOne>(opapi_symbol((std::string(Op::name) + "GetWorkspaceSize").c_str()))),
        phase_two_(reinterpret_cast<PhaseTwoFn>(opapi_symbol(Op::name))) {}

  PhaseOne phase_one_;
  PhaseTwoFn phase_two_;
};

template <typename Op, typename... Args, size_t... I>
void launch_with(c10::DeviceIndex device, const char* arg_names, std::index_sequence<I...>, const Args&... args) {
  using Params = detail::PhaseOneParams<typename Op::PhaseOne>;
  const phases::LaunchSpan launch_span;
  const OpApi<Op>& api = OpApi<Op>::get();
  LaunchRecord record(Op::name, arg_names);
  {
    const phases::Span record_span(phases::kRecord);
    // A fold over the comma operator runs left to right: the record lists the
    // tensors in the executor's order.
    (record.template add<typename Params::template param<I>, ((Op::output_mask >> I) & 1) != 0>(I, args), ...);
  }
  run_launch(
      record, device, reinterpret_cast<const void*>(api.phase_one()),
      [&](BoundArgs& bound, uint64_t* workspace_size, aclOpExecutor** executor) {
        // Braced initialization converts left to right, in the same order.
        const std::tuple<typename Params::template param<I>...> converted{
            bound.template to<typename Params::template param<I>, ((Op::output_mask >> I) & 1) != 0>(I, args)...};
        return api.phase_one()(std::get<I>(converted)..., workspace_size, executor);
      },
      api.phase_two());
}

template <typename Op, typename... Args>
void launch(c10::DeviceIndex device, const char* arg_names, const Args&... args) {
  static_assert(detail::PhaseOneParams<typename Op::PhaseOne>::count == sizeof...(Args),
                "the launch passes a different number of arguments than the ACLNN prototype has");
  launch_with<Op>(device, arg_names, std::index_sequence_for<Args...>{}, args...);
}

}  // namespace flagos

// Guards on `device_source` (a LaunchDevice, tensor, tensor list or device),
// then launches `aclnn_api` with the remaining arguments in prototype order.
// The one way a kernel launches an ACLNN operator; `python -m codegen --check`
// rejects handwritten launches that bypass it. The kernel includes
// "generated/aclnn/<aclnn_api>.h".
#define FLAGOS_GUARDED_LAUNCH(device_source, aclnn_api, ...)                                      \
  do {                                                                                            \
    const ::flagos::LaunchGuard flagos_launch_guard_(::flagos::launch_device_of(device_source));   \
    ::flagos::launch<::flagos::aclnn::aclnn_api>(flagos_launch_guard_.device(), #__VA_ARGS__, __VA_ARGS__); \
  } while (false)
