// The operator library's helper layer (see sim_op.h).
#include "sim_op.h"

#include <ATen/ops/from_blob.h>

#include <algorithm>
#include <span>
#include <unordered_map>

#include <cstring>
#include <stdexcept>

namespace fsim::op {
namespace {

template <class T>
T read(const aclScalar& s) {
  T value;
  std::memcpy(&value, s.bytes, sizeof(T));
  return value;
}

}  // namespace

std::string DTypes::names() const {
  std::string out;
  for (int t = 0; t < 64; ++t) {
    if (!contains(static_cast<aclDataType>(t))) continue;
    if (!out.empty()) out += ", ";
    out += dtypeName(static_cast<aclDataType>(t));
  }
  return out;
}

std::optional<at::ScalarType> scalarTypeOf(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT: return at::kFloat;
    case ACL_FLOAT16: return at::kHalf;
    case ACL_BF16: return at::kBFloat16;
    case ACL_DOUBLE: return at::kDouble;
    case ACL_INT8: return at::kChar;
    case ACL_INT16: return at::kShort;
    case ACL_INT32: return at::kInt;
    case ACL_INT64: return at::kLong;
    case ACL_UINT8: return at::kByte;
    case ACL_UINT16: return at::kUInt16;
    case ACL_UINT32: return at::kUInt32;
    case ACL_UINT64: return at::kUInt64;
    case ACL_BOOL: return at::kBool;
    case ACL_COMPLEX64: return at::kComplexFloat;
    case ACL_COMPLEX128: return at::kComplexDouble;
    case ACL_COMPLEX32: return at::kComplexHalf;
    case ACL_FLOAT8_E5M2: return at::kFloat8_e5m2;
    case ACL_FLOAT8_E4M3FN: return at::kFloat8_e4m3fn;
    default: return std::nullopt;  // ACL_HIFLOAT8 has no ATen type

  }
}

std::optional<aclDataType> aclDataTypeOf(at::ScalarType type) {
  for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64,
                        ACL_UINT8, ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_BOOL, ACL_COMPLEX64, ACL_COMPLEX128,
                        ACL_COMPLEX32, ACL_FLOAT8_E5M2, ACL_FLOAT8_E4M3FN})
    if (scalarTypeOf(t) == type) return t;
  return std::nullopt;
}

at::Tensor tensorOf(const aclTensor& t) {
  std::optional<at::ScalarType> type = scalarTypeOf(t.dtype);
  if (!type) throw std::invalid_argument(cat("dtype ", dtypeName(t.dtype), " has no ATen equivalent"));
  // from_blob wants the first element; tensorData is the storage start.
  char* first = static_cast<char*>(t.data) + t.offset * static_cast<int64_t>(dtypeSize(t.dtype));
  return at::from_blob(first, t.viewDims, t.strides, at::TensorOptions().dtype(*type));
}

at::Scalar scalarOf(const aclScalar* s) {
  if (s == nullptr) return at::Scalar(0);
  switch (s->dtype) {
    case ACL_FLOAT: return read<float>(*s);
    case ACL_FLOAT16: return c10::Half(read<uint16_t>(*s), c10::Half::from_bits());
    case ACL_BF16: return c10::BFloat16(read<uint16_t>(*s), c10::BFloat16::from_bits());
    case ACL_DOUBLE: return read<double>(*s);
    case ACL_INT8: return int64_t{read<int8_t>(*s)};
    case ACL_INT16: return int64_t{read<int16_t>(*s)};
    case ACL_INT32: return int64_t{read<int32_t>(*s)};
    case ACL_INT64: return read<int64_t>(*s);
    case ACL_UINT8: return int64_t{read<uint8_t>(*s)};
    case ACL_UINT16: return read<uint16_t>(*s);
    case ACL_UINT32: return read<uint32_t>(*s);
    case ACL_UINT64: return read<uint64_t>(*s);
    case ACL_BOOL: return read<uint8_t>(*s) != 0;
    case ACL_COMPLEX64: return read<c10::complex<float>>(*s);
    case ACL_COMPLEX128: return read<c10::complex<double>>(*s);
    default: return at::Scalar(0);  // aclCreateScalar admits no other dtype
  }
}

std::vector<at::Scalar> scalarsOf(const aclScalarList* list) {
  std::vector<at::Scalar> out;
  if (list != nullptr)
    for (const aclScalar* s : list->scalars) out.push_back(scalarOf(s));
  return out;
}

std::vector<int64_t> intsOf(const aclIntArray* array) { return array ? array->values : std::vector<int64_t>(); }

std::vector<double> floatsOf(const aclFloatArray* array) {
  return array ? std::vector<double>(array->values.begin(), array->values.end()) : std::vector<double>();
}

std::vector<bool> boolsOf(const aclBoolArray* array) { return array ? array->values : std::vector<bool>(); }

// ---- Views ------------------------------------------------------------------

int64_t viewElements(const aclTensor* t) {
  if (t == nullptr) return 0;
  int64_t n = 1;
  for (int64_t d : t->viewDims) n *= d;
  return n;
}

bool same_layout(std::initializer_list<const aclTensorList*> lists) {
  const aclTensorList* first = *lists.begin();
  for (const aclTensorList* list : lists) {
    if (first == nullptr || list == nullptr) return true;
    if (list->tensors.size() != first->tensors.size()) return false;
    for (size_t i = 0; i < list->tensors.size(); ++i) {
      const aclTensor* a = first->tensors[i];
      const aclTensor* b = list->tensors[i];
      if (a != nullptr && b != nullptr && (a->viewDims != b->viewDims || a->dtype != b->dtype)) return false;
    }
  }
  return true;
}

Views::Views(const aclOpExecutor& executor) : executor_(executor) {
  tensors_.reserve(executor.params.size());
  for (const Param& p : executor.params) {
    std::vector<at::Tensor>& views = tensors_.emplace_back();
    for (const BoundTensor& t : p.tensors) views.push_back(t.tensor ? tensorOf(*t.tensor) : at::Tensor());
  }
}

std::vector<at::Tensor>& Views::find(std::string_view name) {
  for (size_t i = 0; i < executor_.params.size(); ++i)
    if (executor_.params[i].name == name) return tensors_[i];
  throw std::out_of_range(cat(executor_.op, " has no tensor argument '", name, "'"));
}

at::Tensor& Views::operator[](std::string_view name) {
  std::vector<at::Tensor>& views = find(name);
  if (views.size() != 1) throw std::out_of_range(cat(executor_.op, ": argument '", name, "' is a tensor list"));
  return views[0];
}

std::vector<at::Tensor>& Views::list(std::string_view name) { return find(name); }

// ---- Op ---------------------------------------------------------------------

Op& Op::fail(aclnnStatus status, std::string message) {
  if (status_ == ACLNN_SUCCESS) {
    status_ = status;
    setError(std::move(message));
  }
  return *this;
}

bool Op::checkDtype(const char* name, aclDataType dtype, DTypes dtypes) {
  if (dtypes.contains(dtype) && scalarTypeOf(dtype)) return true;
  fail(ACLNN_ERR_PARAM_INVALID, cat(name_, ": argument '", name, "' has dtype ", dtypeName(dtype), ", which ", name_,
                                    " does not support (supported: ", dtypes.names(), ")"));
  return false;
}

namespace {

// The parameters each operator writes, from the registry (`outputs:`), as
// FSIM_PHASE2 records them: every operator the library defines, and only
// those. Filled during static initialization, read-only afterwards.
std::unordered_map<std::string_view, std::span<const char* const>>& registryOutputs() {
  static auto* table = new std::unordered_map<std::string_view, std::span<const char* const>>();
  return *table;
}

std::span<const char* const> outputsOf(std::string_view op) {
  auto it = registryOutputs().find(op);
  return it == registryOutputs().end() ? std::span<const char* const>() : it->second;
}

}  // namespace

RegisterOperator::RegisterOperator(const char* name, std::span<const char* const> outputs) {
  registryOutputs().emplace(name, outputs);
}

Role Op::role(const char* name) {
  for (const char* output : outputsOf(name_)) {
    if (std::string_view(output) == name) {
      outputsSeen_.emplace_back(name);
      return Role::kOutput;
    }
  }
  return Role::kInput;
}

// What nnopbase leaves to the operators (aclCreateTensor takes anything):
// CANN's operators reject more than 8 dimensions and, like ATen, negative
// sizes, strides and offsets, with ACLNN_ERR_PARAM_INVALID.
bool Op::checkShape(const char* name, const aclTensor* t) {
  if (t->viewDims.size() > kMaxDims)
    fail(ACLNN_ERR_PARAM_INVALID, cat(name_, ": argument '", name, "' has ", t->viewDims.size(),
                                      " dimensions; ACLNN operators take at most ", kMaxDims));
  for (size_t d = 0; d < t->viewDims.size() && status_ == ACLNN_SUCCESS; ++d)
    if (t->viewDims[d] < 0 || t->strides[d] < 0)
      fail(ACLNN_ERR_PARAM_INVALID, cat(name_, ": argument '", name, "' has size ", t->viewDims[d], " and stride ",
                                        t->strides[d], " in dimension ", d, "; both must be >= 0"));
  if (t->offset < 0 && status_ == ACLNN_SUCCESS)
    fail(ACLNN_ERR_PARAM_INVALID, cat(name_, ": argument '", name, "' has offset ", t->offset, "; it must be >= 0"));
  return status_ == ACLNN_SUCCESS;
}

Op& Op::tensor(const char* name, const aclTensor* t, DTypes dtypes, bool optional) {
  const Role r = role(name);
  if (optional && t == nullptr && status_ == ACLNN_SUCCESS) {
    params_.push_back(Param{name, r, false, {BoundTensor{}}});
  } else if (present(name, t) && checkDtype(name, t->dtype, dtypes) && checkShape(name, t)) {
    params_.push_back(Param{name, r, false, {BoundTensor{const_cast<aclTensor*>(t), t->serial}}});
  }
  return *this;
}

Op& Op::list(const char* name, const aclTensorList* l, DTypes dtypes) {
  const Role r = role(name);
  if (!present(name, l)) return *this;
  Param p{name, r, true, {}};
  for (size_t i = 0; i < l->tensors.size(); ++i) {
    aclTensor* t = l->tensors[i];
    std::string element = cat(name, "[", i, "]");
    if (!present(element.c_str(), t) || !checkDtype(element.c_str(), t->dtype, dtypes) ||
        !checkShape(element.c_str(), t))
      return *this;
    p.tensors.push_back(BoundTensor{t, t->serial});
  }
  params_.push_back(std::move(p));
  return *this;
}

bool Op::present(const char* name, const void* value) {
  if (status_ != ACLNN_SUCCESS) return false;
  if (value == nullptr) fail(ACLNN_ERR_PARAM_NULLPTR, cat(name_, ": argument '", name, "' is nullptr"));
  return value != nullptr;
}

Op& Op::arg(const char* name, const aclTensor* t, DTypes dtypes) { return tensor(name, t, dtypes, false); }
Op& Op::optional(const char* name, const aclTensor* t, DTypes dtypes) { return tensor(name, t, dtypes, true); }
Op& Op::arg(const char* name, const aclTensorList* l, DTypes dtypes) { return list(name, l, dtypes); }
Op& Op::optional(const char* name, const aclTensorList* l, DTypes dtypes) {
  if (l != nullptr) return list(name, l, dtypes);
  const Role r = role(name);
  if (status_ == ACLNN_SUCCESS) params_.push_back(Param{name, r, true, {}});
  return *this;
}

Op& Op::arg(const char* name, const aclScalar* s, DTypes dtypes) {
  if (present(name, s)) checkDtype(name, s->dtype, dtypes);
  return *this;
}

Op& Op::arg(const char* name, const aclScalarList* l, DTypes dtypes) {
  if (!present(name, l)) return *this;
  for (size_t i = 0; i < l->scalars.size(); ++i) {
    std::string element = cat(name, "[", i, "]");
    if (!present(element.c_str(), l->scalars[i]) || !checkDtype(element.c_str(), l->scalars[i]->dtype, dtypes))
      break;
  }
  return *this;
}

Op& Op::arg(const char* name, const aclIntArray* a) {
  present(name, a);
  return *this;
}
Op& Op::arg(const char* name, const aclFloatArray* a) {
  present(name, a);
  return *this;
}
Op& Op::arg(const char* name, const aclBoolArray* a) {
  present(name, a);
  return *this;
}

Op& Op::dtype(const char* name, aclDataType dtype, DTypes dtypes) {
  if (status_ == ACLNN_SUCCESS) checkDtype(name, dtype, dtypes);
  return *this;
}

Op& Op::require(bool ok, const char* what) {
  if (!ok) fail(ACLNN_ERR_PARAM_INVALID, cat(name_, ": ", what));
  return *this;
}

Op& Op::workspace(uint64_t bytes) {
  workspace_ = bytes;
  return *this;
}

Op& Op::unrepeatable() {
  repeatable_ = false;
  return *this;
}

aclnnStatus Op::build(KernelFn kernel) {
  if (executorOut_ != nullptr) *executorOut_ = nullptr;
  if (workspaceSizeOut_ == nullptr) fail(ACLNN_ERR_PARAM_NULLPTR, cat(name_, ": workspaceSize is nullptr"));
  if (executorOut_ == nullptr) fail(ACLNN_ERR_PARAM_NULLPTR, cat(name_, ": executor is nullptr"));
  if (status_ != ACLNN_SUCCESS) return status_;
  // The simulator's definition and the registry must agree on what the
  // operator writes; a disagreement is a bug in the simulator.
  if (registryOutputs().find(name_) == registryOutputs().end())
    return fail(ACLNN_ERR_INNER, cat(name_, ": not in the registry (yaml/aclnn.yaml), or defined without FSIM_PHASE2")).status_;
  for (const char* output : outputsOf(name_)) {
    if (std::find(outputsSeen_.begin(), outputsSeen_.end(), output) == outputsSeen_.end())
      return fail(ACLNN_ERR_INNER, cat(name_, ": the simulator passes no tensor named '", output,
                                       "', which the registry lists as an output")).status_;
  }
  if (aclnnStatus s = checkFault(name_, 1)) return s;
  // ATen reports errors as c10::Error, whose what() carries a C++ backtrace;
  // the runtime turns the concise message into ACLNN_ERR_INNER.
  auto run = std::make_shared<const std::function<void(const aclOpExecutor&)>>(
      [kernel = std::move(kernel)](const aclOpExecutor& e) {
        try {
          Views views(e);
          kernel(views);
        } catch (const c10::Error& error) {
          throw std::runtime_error(error.what_without_backtrace());
        }
      });
  *executorOut_ = newExecutor(name_, std::move(params_), workspace_, std::move(run), repeatable_);
  *workspaceSizeOut_ = workspace_;
  return ACLNN_SUCCESS;
}

std::optional<std::vector<int64_t>> broadcastDims(std::initializer_list<const aclTensor*> tensors) {
  std::vector<int64_t> shape;
  for (const aclTensor* t : tensors) {
    if (t == nullptr) continue;
    const std::vector<int64_t>& dims = t->viewDims;
    if (dims.size() > shape.size()) shape.insert(shape.begin(), dims.size() - shape.size(), 1);
    const size_t lead = shape.size() - dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t& s = shape[lead + i];
      if (dims[i] == s || dims[i] == 1) continue;
      if (s != 1) return std::nullopt;
      s = dims[i];
    }
  }
  return shape;
}

}  // namespace fsim::op
