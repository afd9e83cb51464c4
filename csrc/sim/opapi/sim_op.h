// Helper layer of the simulated operator library (libflagos_sim_opapi).
//
// How to add an operator
// ======================
// 1. Its prototype must be in yaml/aclnn.yaml, CANN's own (the code generator
//    writes csrc/include/flagos/aclnn/<operator>.h from it); a file of operators
//    must include the headers of the operators it defines (#include
//    "flagos/aclnn/aclnnX.h"), so the compiler checks the definitions against them
//    and a new operator recompiles only its own file's unity batch (the files
//    compile in batches of 8: a helper's name at file scope must not repeat
//    another file's, tests/codegen/test_unity_build_names.py).
// 2. Define both phases in csrc/sim/opapi/ops_<family>.cc (the CMake glob
//    picks up new files). Include only per-operator ATen headers
//    (<ATen/ops/add.h>), never <ATen/ATen.h> or <torch/extension.h>:
//
//      #include <ATen/ops/add.h>
//      #include "sim_op.h"
//      #include "flagos/aclnn/aclnnAdd.h"
//      using namespace fsim::op;
//
//      aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
//                                           const aclScalar* alpha, aclTensor* out,
//                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
//        Op op("aclnnAdd", workspaceSize, executor);
//        op.arg("self", self).arg("other", other).arg("alpha", alpha).arg("out", out);
//        return op.build([alpha = scalarOf(alpha)](Views& v) {
//          at::add_out(v["out"], v["self"], v["other"], alpha);
//        });
//      }
//      FSIM_PHASE2(aclnnAdd)
//
// Rules
// - Call op.arg(name, value) for every pointer parameter, in argument order,
//   with the parameter's name from the prototype. A tensor (or list) is an
//   output when the registry's `outputs:` names it (constness does not: CANN
//   declares aclnnRelu's `out` const); that is what aclSetInputTensorAddr /
//   aclSetOutputTensorAddr index and what mismatch mode "nan" poisons, and
//   build() fails if a registry output was never passed. Use
//   op.optional(...) for a tensor that may be nullptr. An optional last argument restricts the
//   dtypes (kFloating, kNumeric, ..., default kAll). A nullptr required
//   argument fails with ACLNN_ERR_PARAM_NULLPTR, a dtype outside the set
//   with ACLNN_ERR_PARAM_INVALID; the first failure is the one reported.
// - Non-pointer parameters: op.dtype(name, value) for an aclDataType,
//   op.require(condition, "what is wrong") for anything else. The condition
//   is evaluated before require() sees it, so guard pointers:
//   op.require(!out || out->dtype == dtype, "...").
// - The workspace is kDefaultWorkspace (64) bytes unless op.workspace(n).
// - Scalars and arrays are read at phase 1: capture their values in the
//   kernel lambda (scalarOf, intsOf, ...). They return a harmless default
//   for nullptr, which op.arg has already reported.
// - The kernel gets Views: v["name"] is the at::Tensor of a tensor argument
//   (undefined for an absent optional one), v.list("name") the tensors of a
//   list argument. They are CPU tensors viewing the simulated device memory,
//   so compute into the outputs with ATen's *_out / in-place functions; never
//   return new tensors. ATen errors become ACLNN_ERR_INNER at phase 2.
// - FSIM_PHASE2(aclnnX) defines phase 2, which goes through the runtime's
//   validated launch (device checks, mismatch mode, fault injection,
//   counters, protect-mode access) before the kernel runs.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/TensorOperators.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include "flagos/acl_api.h"
#include "sim_internal.h"

namespace fsim::op {

// The workspace every operator asks for unless it calls Op::workspace(), so
// that workspace placement is always exercised.
inline constexpr uint64_t kDefaultWorkspace = 64;

// The most dimensions a tensor argument may have (CANN's operators check
// MAX_SUPPORT_DIMS_NUMS = 8 at phase 1).
inline constexpr size_t kMaxDims = 8;

// A set of aclDataTypes that an argument accepts.
class DTypes {
 public:
  constexpr DTypes(std::initializer_list<aclDataType> types) {
    for (aclDataType t : types)
      if (t >= 0 && t < 64) bits_ |= uint64_t{1} << t;
  }
  constexpr bool contains(aclDataType t) const { return t >= 0 && t < 64 && ((bits_ >> t) & 1); }
  constexpr DTypes operator|(DTypes other) const {
    DTypes r{};
    r.bits_ = bits_ | other.bits_;
    return r;
  }
  std::string names() const;  // "ACL_FLOAT, ACL_INT32, ..."

 private:
  uint64_t bits_ = 0;
};

inline constexpr DTypes kFloating{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
inline constexpr DTypes kIntegral{ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8};
inline constexpr DTypes kBool{ACL_BOOL};
inline constexpr DTypes kComplex{ACL_COMPLEX64, ACL_COMPLEX128};
inline constexpr DTypes kNumeric = kFloating | kIntegral;
inline constexpr DTypes kAll = kNumeric | kBool | kComplex;

// aclDataType <-> at::ScalarType (nullopt where there is no equivalent).
std::optional<at::ScalarType> scalarTypeOf(aclDataType dtype);
std::optional<aclDataType> aclDataTypeOf(at::ScalarType type);

// A CPU tensor viewing an aclTensor's elements in simulated device memory.
at::Tensor tensorOf(const aclTensor& tensor);

// The element count of a tensor argument's view (0 for nullptr, which op.arg reports).
int64_t viewElements(const aclTensor* tensor);

// Every list as long as the first, element i of each with the shape and
// dtype of the first's. A nullptr list ends the check (op.arg reports it;
// an absent optional list has nothing to compare).
bool same_layout(std::initializer_list<const aclTensorList*> lists);

// Values of scalar / array arguments, for capture at phase 1.
at::Scalar scalarOf(const aclScalar* scalar);  // 0 for nullptr
std::vector<at::Scalar> scalarsOf(const aclScalarList* list);
std::vector<int64_t> intsOf(const aclIntArray* array);
std::vector<double> floatsOf(const aclFloatArray* array);
std::vector<bool> boolsOf(const aclBoolArray* array);
// The broadcast of the view shapes of the non-null `tensors` (NumPy rules),
// or nullopt when they do not broadcast. Callers decide what a null means.
std::optional<std::vector<int64_t>> broadcastDims(std::initializer_list<const aclTensor*> tensors);

// The tensors of a launch, by argument name.
class Views {
 public:
  explicit Views(const aclOpExecutor& executor);
  // Mutable because ATen's *_out and in-place functions take `at::Tensor&`.
  at::Tensor& operator[](std::string_view name);
  std::vector<at::Tensor>& list(std::string_view name);

 private:
  std::vector<at::Tensor>& find(std::string_view name);
  const aclOpExecutor& executor_;
  std::vector<std::vector<at::Tensor>> tensors_;  // parallel to executor_.params
};

using KernelFn = std::function<void(Views&)>;

// Phase 1 of one operator call: argument checks, then build().
class Op {
 public:
  Op(const char* name, uint64_t* workspaceSize, aclOpExecutor** executor)
      : name_(name), workspaceSizeOut_(workspaceSize), executorOut_(executor) {}

  Op& arg(const char* name, const aclTensor* tensor, DTypes dtypes = kAll);
  Op& arg(const char* name, const aclTensorList* list, DTypes dtypes = kAll);
  Op& optional(const char* name, const aclTensor* tensor, DTypes dtypes = kAll);
  // An absent optional list is an empty one in Views::list.
  Op& optional(const char* name, const aclTensorList* list, DTypes dtypes = kAll);
  Op& arg(const char* name, const aclScalar* scalar, DTypes dtypes = kAll);
  Op& arg(const char* name, const aclScalarList* list, DTypes dtypes = kAll);
  Op& arg(const char* name, const aclIntArray* array);
  Op& arg(const char* name, const aclFloatArray* array);
  Op& arg(const char* name, const aclBoolArray* array);
  Op& dtype(const char* name, aclDataType dtype, DTypes dtypes = kAll);
  Op& require(bool ok, const char* what);  // ACLNN_ERR_PARAM_INVALID "<op>: <what>"
  Op& workspace(uint64_t bytes);
  // The executor cannot be made repeatable (aclSetAclOpExecutorRepeatable
  // fails with ACLNN_ERR_INNER), as CANN's operators whose output shape
  // depends on the data: the caller must launch it once and not cache it.
  Op& unrepeatable();

  // Checks the out-pointers and fault injection, then creates the executor.
  // Returns the first failure instead if there was one.
  aclnnStatus build(KernelFn kernel);

 private:
  Op& fail(aclnnStatus status, std::string message);
  bool checkDtype(const char* name, aclDataType dtype, DTypes dtypes);
  Op& tensor(const char* name, const aclTensor* tensor, DTypes dtypes, bool optional);
  Op& list(const char* name, const aclTensorList* list, DTypes dtypes);
  Role role(const char* name);
  bool checkShape(const char* name, const aclTensor* tensor);
  bool present(const char* name, const void* value);  // false (and failed) for nullptr

  const char* name_;
  uint64_t* workspaceSizeOut_;
  aclOpExecutor** executorOut_;
  uint64_t workspace_ = kDefaultWorkspace;
  bool repeatable_ = true;
  aclnnStatus status_ = ACLNN_SUCCESS;
  std::vector<Param> params_;
  std::vector<std::string> outputsSeen_;
};

// Records an operator defined with FSIM_PHASE2 and the parameters its
// registry entry lists as outputs (static initialization, one per operator).
struct RegisterOperator {
  RegisterOperator(const char* name, std::span<const char* const> outputs);
};

}  // namespace fsim::op

// Defines phase 2 of operator `name`, after its phase 1. The static_assert
// fails to compile when the phase-1 definition above does not have the
// registry's prototype exactly: a definition with other parameter types
// would be a C++ overload, not the extern "C" entry point, and the operator
// library would lack the symbol.
//
// It also records the operator's registry outputs (the traits of
// aclnn/<name>.h) for Op::build, so the library needs no table of every
// operator and a new operator recompiles only the file that defines it.
#define FSIM_PHASE2(name)                                                                                  \
  static_assert(std::is_same_v<decltype(&name##GetWorkspaceSize), ::flagos::aclnn::name::PhaseOne>,       \
                #name "GetWorkspaceSize is not defined with its registry prototype");                     \
  static const ::fsim::op::RegisterOperator fsim_registered_##name{                                      \
      #name, std::span<const char* const>(::flagos::aclnn::name::outputs)};                               \
  aclnnStatus name(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) { \
    return ::fsim::launch(#name, workspace, workspaceSize, executor, stream);                            \
  }
