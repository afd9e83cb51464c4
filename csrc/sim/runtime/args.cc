// Operator arguments (libnnopbase's aclCreate* / aclDestroy*). Creation
// copies what it is given and, like nnopbase, validates little (see
// docs/cann-fidelity.md). Every live object is counted (live_arguments) so
// that tests can see leaks.
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime.h"

namespace fsim {
namespace {

// Live aclTensors by address, with their serials: an executor checks at
// launch that the objects it was built with still exist.
struct LiveTensors {
  std::mutex mutex;
  std::unordered_map<const aclTensor*, uint64_t> serials;
  uint64_t next = 1;
};

LiveTensors& liveTensors() {
  static LiveTensors* live = new LiveTensors;  // leaked: threads may use it during exit
  return *live;
}

template <class T>
T* track(T* object) {
  counters().liveArguments++;
  return object;
}

aclTensor* track(aclTensor* tensor) {
  LiveTensors& live = liveTensors();
  {
    std::lock_guard lock(live.mutex);
    tensor->serial = live.next++;
    live.serials.emplace(tensor, tensor->serial);
  }
  counters().liveArguments++;
  return tensor;
}

template <class T>
aclnnStatus destroy(const T* object) {
  if (object != nullptr) {
    counters().liveArguments--;
    delete object;
  }
  return ACLNN_SUCCESS;
}

aclnnStatus destroy(const aclTensor* tensor) {
  if (tensor == nullptr) return ACLNN_SUCCESS;
  LiveTensors& live = liveTensors();
  {
    std::lock_guard lock(live.mutex);
    // CANN deletes whatever it is given: a second destroy is a double free.
    if (live.serials.erase(tensor) == 0)
      return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor: ", static_cast<const void*>(tensor),
                  " is not a live aclTensor (destroyed twice, or never created)");
  }
  layoutChanged();
  counters().liveArguments--;
  delete tensor;
  return ACLNN_SUCCESS;
}

}  // namespace

TensorLookup::TensorLookup() : lock_(lockSoon(liveTensors().mutex)) {}

bool TensorLookup::live(const aclTensor* tensor, uint64_t serial) const {
  const LiveTensors& live = liveTensors();
  auto it = live.serials.find(tensor);
  return it != live.serials.end() && it->second == serial;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

// Like nnopbase, creation checks almost nothing: only that the dimension
// arrays exist when their counts say so. Sizes, strides, offsets, ranks and
// dtypes are the operators' to check at phase 1 (Op::arg). A null `stride`
// means contiguous.
aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims,
                           uint64_t storageDimsNum, void* tensorData) {
  if ((viewDims == nullptr && viewDimsNum > 0) || (storageDims == nullptr && storageDimsNum > 0)) return nullptr;
  auto* t = new aclTensor;
  t->viewDims.assign(viewDims, viewDims + viewDimsNum);
  if (stride != nullptr) {
    t->strides.assign(stride, stride + viewDimsNum);
  } else {
    t->strides.assign(viewDimsNum, 1);
    for (uint64_t i = viewDimsNum; i-- > 1;) t->strides[i - 1] = t->strides[i] * t->viewDims[i];
  }
  t->offset = offset;
  t->dtype = dataType;
  t->format = format;
  t->storageDims.assign(storageDims, storageDims + storageDimsNum);
  t->data = tensorData;
  return track(t);
}

aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  if (value == nullptr) return nullptr;  // nnopbase: no message either
  size_t size = dtypeSize(dataType);
  if (size == 0) {
    setError(cat("aclCreateScalar: dataType ", static_cast<int>(dataType), " is not a supported aclDataType"));
    return nullptr;
  }
  auto* s = new aclScalar;
  s->dtype = dataType;
  std::memcpy(s->bytes, value, size);
  return track(s);
}

// A null `value` makes an empty array, whatever `size` says (as nnopbase).
aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  return track(new aclIntArray{value != nullptr ? std::vector<int64_t>(value, value + size) : std::vector<int64_t>()});
}

aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
  return track(new aclFloatArray{value != nullptr ? std::vector<float>(value, value + size) : std::vector<float>()});
}

aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  return track(new aclBoolArray{value != nullptr ? std::vector<bool>(value, value + size) : std::vector<bool>()});
}

// Lists take ownership of their elements, as in CANN; elements are not
// checked (a null element is the operator's to reject).
aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  auto* list = new aclTensorList;
  if (value != nullptr)
    for (uint64_t i = 0; i < size; ++i) list->tensors.push_back(const_cast<aclTensor*>(value[i]));
  return track(list);
}

aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size) {
  auto* list = new aclScalarList;
  if (value != nullptr)
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
