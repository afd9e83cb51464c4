// Operator arguments (libnnopbase's aclCreate* / aclDestroy*). Creation
// copies what it is given; a failed creation returns nullptr and sets the
// error message. Every live object is counted (live_arguments) so that
// tests can see leaks.
#include <cstring>

#include "runtime.h"

namespace fsim {
namespace {

template <class T>
T* track(T* object) {
  counters().liveArguments++;
  return object;
}

template <class T>
aclnnStatus destroy(const T* object) {
  if (object != nullptr) {
    counters().liveArguments--;
    delete object;
  }
  return ACLNN_SUCCESS;
}

bool checkArray(const char* fn, const void* value, uint64_t size) {
  if (value == nullptr && size > 0) {
    setError(cat(fn, ": value is nullptr but size is ", size));
    return false;
  }
  return true;
}

}  // namespace
}  // namespace fsim

using namespace fsim;

extern "C" {

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims,
                           uint64_t storageDimsNum, void* tensorData) {
  const char* fn = "aclCreateTensor";
  if (viewDimsNum > 0 && (viewDims == nullptr || stride == nullptr)) {
    setError(cat(fn, ": ", viewDims == nullptr ? "viewDims" : "stride", " is nullptr but viewDimsNum is ",
                 viewDimsNum));
    return nullptr;
  }
  if (storageDimsNum > 0 && storageDims == nullptr) {
    setError(cat(fn, ": storageDims is nullptr but storageDimsNum is ", storageDimsNum));
    return nullptr;
  }
  if (dtypeSize(dataType) == 0) {
    setError(cat(fn, ": dataType ", static_cast<int>(dataType), " is not a supported aclDataType"));
    return nullptr;
  }
  if (offset < 0) {
    setError(cat(fn, ": offset ", offset, " is negative"));
    return nullptr;
  }
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    if (viewDims[i] < 0 || stride[i] < 0) {
      setError(cat(fn, ": dimension ", i, " has size ", viewDims[i], " and stride ", stride[i],
                   "; both must be >= 0"));
      return nullptr;
    }
  }
  auto* t = new aclTensor;
  t->viewDims.assign(viewDims, viewDims + viewDimsNum);
  t->strides.assign(stride, stride + viewDimsNum);
  t->offset = offset;
  t->dtype = dataType;
  t->format = format;
  t->storageDims.assign(storageDims, storageDims + storageDimsNum);
  t->data = tensorData;
  return track(t);
}

aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  const char* fn = "aclCreateScalar";
  if (value == nullptr) {
    setError(cat(fn, ": value is nullptr"));
    return nullptr;
  }
  size_t size = dtypeSize(dataType);
  if (size == 0) {
    setError(cat(fn, ": dataType ", static_cast<int>(dataType), " is not a supported aclDataType"));
    return nullptr;
  }
  auto* s = new aclScalar;
  s->dtype = dataType;
  std::memcpy(s->bytes, value, size);
  return track(s);
}

aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  if (!checkArray("aclCreateIntArray", value, size)) return nullptr;
  return track(new aclIntArray{std::vector<int64_t>(value, value + size)});
}

aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
  if (!checkArray("aclCreateFloatArray", value, size)) return nullptr;
  return track(new aclFloatArray{std::vector<float>(value, value + size)});
}

aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  if (!checkArray("aclCreateBoolArray", value, size)) return nullptr;
  return track(new aclBoolArray{std::vector<bool>(value, value + size)});
}

// Lists take ownership of their elements, as in CANN.
aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  if (!checkArray("aclCreateTensorList", value, size)) return nullptr;
  auto* list = new aclTensorList;
  for (uint64_t i = 0; i < size; ++i) list->tensors.push_back(const_cast<aclTensor*>(value[i]));
  return track(list);
}

aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size) {
  if (!checkArray("aclCreateScalarList", value, size)) return nullptr;
  auto* list = new aclScalarList;
  for (uint64_t i = 0; i < size; ++i) list->scalars.push_back(const_cast<aclScalar*>(value[i]));
  return track(list);
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) { return destroy(tensor); }
aclnnStatus aclDestroyScalar(const aclScalar* scalar) { return destroy(scalar); }
aclnnStatus aclDestroyIntArray(const aclIntArray* array) { return destroy(array); }
aclnnStatus aclDestroyFloatArray(const aclFloatArray* array) { return destroy(array); }
aclnnStatus aclDestroyBoolArray(const aclBoolArray* array) { return destroy(array); }

aclnnStatus aclDestroyTensorList(const aclTensorList* array) {
  if (array != nullptr)
    for (aclTensor* t : array->tensors) destroy(t);
  return destroy(array);
}

aclnnStatus aclDestroyScalarList(const aclScalarList* array) {
  if (array != nullptr)
    for (aclScalar* s : array->scalars) destroy(s);
  return destroy(array);
}

}  // extern "C"
