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
// (flagos/aclnn/<operator>.h, which the kernel includes); each argument is
// converted to the type of its parameter at compile time, and whether the
// operator writes it comes from the registry, not from its constness.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <c10/util/FunctionRef.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "flagos/acl_api.h"
#include "runtime/acl_args.h"
#include "runtime/device.h"
#include "runtime/launch_device.h"
#include "runtime/opapi.h"
#include "runtime/phases.h"

namespace flagos {

// ---- the launch ----------------------------------------------------------

// The launch-time device sanitizer (FLAGOS_DEVICE_CHECK=1): before phase 2,
// every tensor argument must live on the launch device, by the allocator's
// records.
void set_device_check_enabled(bool enabled);
bool device_check_enabled();

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
// library and kept as pointers of their exact types. `Op` is the operator's
// traits (flagos/aclnn/<operator>.h).
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
// "flagos/aclnn/<aclnn_api>.h".
#define FLAGOS_GUARDED_LAUNCH(device_source, aclnn_api, ...)                                      \
  do {                                                                                            \
    const ::flagos::LaunchGuard flagos_launch_guard_(::flagos::launch_device_of(device_source));   \
    ::flagos::launch<::flagos::aclnn::aclnn_api>(flagos_launch_guard_.device(), #__VA_ARGS__, __VA_ARGS__); \
  } while (false)
