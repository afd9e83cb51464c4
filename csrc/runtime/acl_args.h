// What a launch passes to ACLNN: the record of its arguments (the executor
// cache's key and the tensor addresses) and the ACLNN argument objects
// phase 1 takes (aclCreateTensor & co.), both made by one visitor over the
// arguments in prototype order; and the dtype map.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <c10/util/Exception.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "flagos/acl_api.h"

namespace flagos {

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

namespace detail {

template <typename T>
inline constexpr bool always_false = false;

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
    } else if constexpr (std::is_same_v<A, std::optional<at::TensorList>>) {
      return arg.has_value() ? v.tensor_list(*arg) : v.absent();
    } else {
      static_assert(always_false<A>, "an aclTensorList parameter takes at::TensorList or std::optional<at::TensorList>");
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

}  // namespace flagos
