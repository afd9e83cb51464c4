#include "runtime/acl_args.h"

#include <c10/util/Exception.h>

#include <cstring>
#include <optional>

#include "runtime/acl_check.h"

namespace flagos {

// ---- argument conversion -----------------------------------------------

namespace {

// CANN's aclDataType of an ATen dtype, if it has one.
std::optional<aclDataType> acl_dtype_of(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return ACL_FLOAT;
    case at::kHalf: return ACL_FLOAT16;
    case at::kBFloat16: return ACL_BF16;
    case at::kDouble: return ACL_DOUBLE;
    case at::kChar: return ACL_INT8;
    case at::kShort: return ACL_INT16;
    case at::kInt: return ACL_INT32;
    case at::kLong: return ACL_INT64;
    case at::kByte: return ACL_UINT8;
    case at::kUInt16: return ACL_UINT16;
    case at::kUInt32: return ACL_UINT32;
    case at::kUInt64: return ACL_UINT64;
    case at::kBool: return ACL_BOOL;
    case at::kComplexFloat: return ACL_COMPLEX64;
    case at::kComplexDouble: return ACL_COMPLEX128;
    case at::kComplexHalf: return ACL_COMPLEX32;
    case at::kFloat8_e5m2: return ACL_FLOAT8_E5M2;
    case at::kFloat8_e4m3fn: return ACL_FLOAT8_E4M3FN;
    default: return std::nullopt;
  }
}

}  // namespace

bool has_acl_dtype(at::ScalarType dtype) { return acl_dtype_of(dtype).has_value(); }

aclDataType to_acl_dtype(at::ScalarType dtype) {
  const std::optional<aclDataType> acl = acl_dtype_of(dtype);
  TORCH_CHECK(acl.has_value(), "flagos: ACLNN has no data type for ", dtype);
  return *acl;
}

// ---- the record ------------------------------------------------------------

std::string LaunchRecord::arg_name(int position) const {
  // Split the macro's argument text at top-level commas.
  int depth = 0;
  int index = 0;
  std::string name;
  for (const char* c = arg_names_; *c != '\0'; ++c) {
    if (*c == '(' || *c == '[' || *c == '{' || *c == '<') ++depth;
    if (*c == ')' || *c == ']' || *c == '}' || *c == '>') --depth;
    if (*c == ',' && depth == 0) {
      if (index++ == position) break;
      name.clear();
      continue;
    }
    if (index == position && !(name.empty() && *c == ' ')) name += *c;
  }
  return "'" + name + "' (argument " + std::to_string(position + 1) + ")";
}

namespace {

int64_t storage_elements(const at::Tensor& t) {
  return static_cast<int64_t>(t.storage().nbytes()) / static_cast<int64_t>(t.itemsize());
}

}  // namespace

void LaunchRecord::note_dtype(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16:
    case at::kInt:
    case at::kLong:
      return;
    default:
      if (!uncommon_dtype_) uncommon_dtype_ = dtype;
  }
}

int LaunchRecord::tensor(const at::Tensor& t) {
  TORCH_CHECK(t.device().is_privateuseone(), "flagos: ", api_, ": argument ", arg_name(position_), " is a ",
              t.device(), " tensor; ACLNN takes flagos tensors (a Python number must be passed as a scalar)");
  note_dtype(t.scalar_type());
  if (!has_acl_dtype(t.scalar_type())) {
    // No aclDataType at all (float8_e4m3fnuz, a quantized type): no operator
    // can take it, so the op runs on the CPU as for a dtype an operator
    // refuses (strict mode refuses that, naming the op and the dtype).
    throw DtypeUnsupported(api_, c10::toString(t.scalar_type()),
                           c10::str("flagos: ", api_, ": ACLNN has no data type for ", t.scalar_type(),
                                    " (argument ", arg_name(position_), ")"));
  }
  const int64_t dim = t.dim();
  if (dim > max_dims_) max_dims_ = dim;
  // Written in place: room for every field at once (a per-field append
  // checked the capacity each time), then the size actually written. The storage's
  // size is signed in bytes: with the dtype signed too, it says as much as
  // its element count, without a division.
  const aclDataType dtype = to_acl_dtype(t.scalar_type());
  const size_t start = signature_.size();
  signature_.resize_for_overwrite(start + sizeof(kPresent) + sizeof(dtype) + sizeof(is_output_) +
                                  sizeof(int64_t) * (2 * dim + 3));
  uint8_t* at = signature_.data() + start;
  auto put = [&at](const auto& value) {
    std::memcpy(at, &value, sizeof(value));
    at += sizeof(value);
  };
  put(kPresent);
  put(dtype);
  put(is_output_);
  put(dim);
  for (int64_t size : t.sizes()) put(size);
  for (int64_t stride : t.strides()) put(stride);
  put(t.storage_offset());
  put(static_cast<int64_t>(t.storage().nbytes()));
  signature_.resize(static_cast<size_t>(at - signature_.data()));
  const TensorAddress address{const_cast<void*>(t.storage().data()), position_};
  (is_output_ ? static_cast<c10::SmallVectorImpl<TensorAddress>&>(outputs_) : inputs_).push_back(address);
  return 0;
}

int LaunchRecord::tensor_list(at::TensorList tensors) {
  sign(kPresent);
  sign(tensors.size());
  for (const at::Tensor& t : tensors) tensor(t);
  return 0;
}

int LaunchRecord::scalar(const c10::Scalar& s) {
  sign(kPresent);
  if (s.isComplex()) {
    note_dtype(at::kComplexDouble);
    sign(ACL_COMPLEX128);
    sign(s.toComplexDouble());
  } else if (s.isBoolean()) {
    sign(ACL_BOOL);
    sign(s.toBool());
  } else if (s.isIntegral(/*includeBool=*/false)) {
    sign(ACL_INT64);
    sign(s.toLong());
  } else {
    sign(ACL_DOUBLE);
    sign(s.toDouble());
  }
  return 0;
}

int LaunchRecord::int_array(at::IntArrayRef values) {
  sign(kPresent);
  sign(values.size());
  for (int64_t value : values) sign(value);
  return 0;
}

int LaunchRecord::bool_array(const bool* values, size_t size) {
  sign(kPresent);
  sign(size);
  for (size_t i = 0; i < size; ++i) sign(values[i]);
  return 0;
}

int LaunchRecord::text(std::string_view value) {
  sign(kPresent);
  sign(value.size());
  signature_.append(value.begin(), value.end());
  return 0;
}

int LaunchRecord::dtype(at::ScalarType dtype) {
  sign(to_acl_dtype(dtype));
  return 0;
}

// ---- the argument objects ------------------------------------------------------

BoundArgs::~BoundArgs() {
  // A list owns its elements, so list elements are not in owned_tensors_.
  for (const aclTensorList* list : owned_tensor_lists_) aclDestroyTensorList(list);
  for (const aclTensor* tensor : owned_tensors_) aclDestroyTensor(tensor);
  for (const aclScalar* scalar : owned_scalars_) aclDestroyScalar(scalar);
  for (const aclIntArray* array : owned_int_arrays_) aclDestroyIntArray(array);
  for (const aclBoolArray* array : owned_bool_arrays_) aclDestroyBoolArray(array);
}

aclTensor* BoundArgs::make_tensor(const at::Tensor& t) {
  const int64_t storage_elems = storage_elements(t);
  aclTensor* handle = aclCreateTensor(t.sizes().data(), static_cast<uint64_t>(t.dim()), to_acl_dtype(t.scalar_type()),
                                      t.strides().data(), t.storage_offset(), ACL_FORMAT_ND, &storage_elems, 1,
                                      const_cast<void*>(t.storage().data()));
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateTensor failed for ", record_->api(), " argument ",
              record_->arg_name(position_), ": ", recent_error_message());
  (is_output_ ? outputs_ : inputs_).push_back(handle);
  return handle;
}

aclTensor* BoundArgs::tensor(const at::Tensor& t) {
  aclTensor* handle = make_tensor(t);
  owned_tensors_.push_back(handle);
  return handle;
}

aclTensorList* BoundArgs::tensor_list(at::TensorList tensors) {
  std::vector<const aclTensor*> elements;
  elements.reserve(tensors.size());
  try {
    for (const at::Tensor& t : tensors) elements.push_back(make_tensor(t));
  } catch (...) {
    for (const aclTensor* element : elements) aclDestroyTensor(element);
    throw;
  }
  aclTensorList* handle = aclCreateTensorList(elements.data(), elements.size());
  if (handle == nullptr) {
    for (const aclTensor* element : elements) aclDestroyTensor(element);
    TORCH_CHECK(false, "flagos: aclCreateTensorList failed: ", recent_error_message());
  }
  owned_tensor_lists_.push_back(handle);  // the list owns its elements now
  return handle;
}

aclScalar* BoundArgs::scalar(const c10::Scalar& s) {
  aclScalar* handle = nullptr;
  if (s.isComplex()) {
    c10::complex<double> value = s.toComplexDouble();
    handle = aclCreateScalar(&value, ACL_COMPLEX128);
  } else if (s.isBoolean()) {
    bool value = s.toBool();
    handle = aclCreateScalar(&value, ACL_BOOL);
  } else if (s.isIntegral(/*includeBool=*/false)) {
    int64_t value = s.toLong();
    handle = aclCreateScalar(&value, ACL_INT64);
  } else {
    double value = s.toDouble();
    handle = aclCreateScalar(&value, ACL_DOUBLE);
  }
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateScalar failed: ", recent_error_message());
  owned_scalars_.push_back(handle);
  return handle;
}

aclIntArray* BoundArgs::int_array(at::IntArrayRef values) {
  aclIntArray* handle = aclCreateIntArray(values.data(), values.size());
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateIntArray failed: ", recent_error_message());
  owned_int_arrays_.push_back(handle);
  return handle;
}

aclBoolArray* BoundArgs::bool_array(const bool* values, size_t size) {
  aclBoolArray* handle = aclCreateBoolArray(values, size);
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateBoolArray failed: ", recent_error_message());
  owned_bool_arrays_.push_back(handle);
  return handle;
}

char* BoundArgs::text(std::string_view value) { return owned_texts_.emplace_back(value).data(); }

}  // namespace flagos
