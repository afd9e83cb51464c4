#include "runtime/launch.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/op_registration/adaption.h>
#include <c10/util/Exception.h>
#include <c10/util/hash.h>

#include <cstdlib>
#include <cstring>
#include <list>
#include <unordered_map>

#include "runtime/allocator.h"
#include "runtime/stream.h"

namespace flagos {

// ---- guard ---------------------------------------------------------------

std::atomic<bool> detail::guards_enabled{true};

void set_guards_enabled(bool enabled) { detail::guards_enabled.store(enabled); }

void LaunchGuard::restore() noexcept {
  try {
    set_device(previous_);
  } catch (const std::exception& e) {
    TORCH_WARN("flagos: restoring flagos:", static_cast<int>(previous_),
               " after a launch failed: ", e.what());
  }
}

// ---- checks and outputs --------------------------------------------------

void check_same_device(const char* op, std::initializer_list<DeviceCheckArg> args) {
  std::optional<c10::Device> common;
  for (const DeviceCheckArg& arg : args) {
    for (const at::Tensor& tensor : arg.tensors) {
      if (!is_cpu_scalar(tensor)) {
        c10::impl::check_and_update_common_device(common, tensor, op, arg.name);
      }
    }
  }
}

at::Tensor empty_on(const LaunchDevice& device, at::IntArrayRef sizes, at::ScalarType dtype) {
  const c10::DeviceIndex index = device.has_value() ? device.index : current_device();
  return at::detail::empty_generic(sizes, device_allocator(index),
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype,
                                   std::nullopt);
}

// ---- switches ------------------------------------------------------------

namespace {

bool env_flag(const char* name, bool fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    return fallback;
  }
  return std::strcmp(value, "0") != 0;
}

std::atomic<bool> device_check{env_flag("FLAGOS_DEVICE_CHECK", false)};
std::atomic<bool> executor_cache_enabled{env_flag("FLAGOS_EXECUTOR_CACHE", true)};
std::atomic<uint64_t> cache_hits{0};
std::atomic<uint64_t> cache_misses{0};
std::atomic<uint64_t> cache_evictions{0};

}  // namespace

void set_device_check_enabled(bool enabled) { device_check.store(enabled); }
bool device_check_enabled() { return device_check.load(std::memory_order_relaxed); }
void set_executor_cache_enabled(bool enabled) { executor_cache_enabled.store(enabled); }

ExecutorCacheStats executor_cache_stats() {
  return {cache_hits.load(), cache_misses.load(), cache_evictions.load()};
}

void reset_executor_cache_stats() {
  cache_hits = 0;
  cache_misses = 0;
  cache_evictions = 0;
}

// ---- argument conversion -----------------------------------------------

aclDataType to_acl_dtype(at::ScalarType dtype) {
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
    default: TORCH_CHECK(false, "flagos: ACLNN has no data type for ", dtype);
  }
}

LaunchArgs::~LaunchArgs() {
  // A list owns its elements, so list elements are not in owned_tensors_.
  for (const aclTensorList* list : owned_tensor_lists_) aclDestroyTensorList(list);
  for (const aclTensor* tensor : owned_tensors_) aclDestroyTensor(tensor);
  for (const aclScalar* scalar : owned_scalars_) aclDestroyScalar(scalar);
  for (const aclIntArray* array : owned_int_arrays_) aclDestroyIntArray(array);
  for (const aclBoolArray* array : owned_bool_arrays_) aclDestroyBoolArray(array);
}

std::string LaunchArgs::arg_name(int position) const {
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

aclTensor* LaunchArgs::tensor(const at::Tensor& t, bool is_output) {
  sign(kPresent);
  const int position = position_ - 1;
  TORCH_CHECK(t.device().is_privateuseone(), "flagos: ", api_, ": argument ", arg_name(position),
              " is a ", t.device(), " tensor; ACLNN takes flagos tensors (a Python number must be "
              "passed as a scalar)");
  const int64_t itemsize = static_cast<int64_t>(t.itemsize());
  const int64_t storage_elems = static_cast<int64_t>(t.storage().nbytes()) / itemsize;
  void* data = const_cast<void*>(t.storage().data());
  const aclDataType dtype = to_acl_dtype(t.scalar_type());
  aclTensor* handle = aclCreateTensor(t.sizes().data(), t.dim(), dtype, t.strides().data(),
                                      t.storage_offset(), ACL_FORMAT_ND, &storage_elems, 1, data);
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateTensor failed for ", api_, " argument ",
              arg_name(position), ": ", aclGetRecentErrMsg());
  owned_tensors_.push_back(handle);
  tensors_.push_back({position, data, is_output});
  sign(dtype);
  sign(is_output);
  sign(t.dim());
  for (int64_t size : t.sizes()) sign(size);
  for (int64_t stride : t.strides()) sign(stride);
  sign(t.storage_offset());
  sign(storage_elems);
  return handle;
}

aclScalar* LaunchArgs::scalar(const c10::Scalar& s) {
  sign(kPresent);
  aclScalar* handle = nullptr;
  if (s.isBoolean()) {
    bool value = s.toBool();
    sign(value);
    handle = aclCreateScalar(&value, ACL_BOOL);
  } else if (s.isIntegral(/*includeBool=*/false)) {
    int64_t value = s.toLong();
    sign(value);
    handle = aclCreateScalar(&value, ACL_INT64);
  } else {
    TORCH_CHECK(!s.isComplex(), "flagos: ", api_, " takes no complex scalar");
    double value = s.toDouble();
    sign(value);
    handle = aclCreateScalar(&value, ACL_DOUBLE);
  }
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateScalar failed: ", aclGetRecentErrMsg());
  owned_scalars_.push_back(handle);
  return handle;
}

aclIntArray* LaunchArgs::int_array(at::IntArrayRef values) {
  sign(kPresent);
  sign(values.size());
  for (int64_t value : values) sign(value);
  aclIntArray* handle = aclCreateIntArray(values.data(), values.size());
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateIntArray failed: ", aclGetRecentErrMsg());
  owned_int_arrays_.push_back(handle);
  return handle;
}

aclBoolArray* LaunchArgs::bool_array(const bool* values, size_t size) {
  sign(kPresent);
  sign(size);
  for (size_t i = 0; i < size; ++i) sign(values[i]);
  aclBoolArray* handle = aclCreateBoolArray(values, size);
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateBoolArray failed: ", aclGetRecentErrMsg());
  owned_bool_arrays_.push_back(handle);
  return handle;
}

char* LaunchArgs::text(std::string_view value) {
  sign(kPresent);
  sign(value.size());
  signature_.append(value);
  return owned_texts_.emplace_back(value).data();
}

aclTensorList* LaunchArgs::tensor_list(at::TensorList list, bool is_output) {
  sign(kPresent);
  sign(list.size());
  std::vector<const aclTensor*> elements;
  elements.reserve(list.size());
  const size_t first_owned = owned_tensors_.size();
  for (const at::Tensor& t : list) {
    elements.push_back(tensor(t, is_output));
  }
  aclTensorList* handle = aclCreateTensorList(elements.data(), elements.size());
  TORCH_CHECK(handle != nullptr, "flagos: aclCreateTensorList failed: ", aclGetRecentErrMsg());
  owned_tensors_.resize(first_owned);  // the list owns its elements now
  owned_tensor_lists_.push_back(handle);
  return handle;
}

// ---- executor cache --------------------------------------------------------

namespace {

struct CacheKey {
  c10::DeviceIndex device;
  aclrtStream stream;
  const void* entry;
  std::string signature;
  bool operator==(const CacheKey& other) const {
    return device == other.device && stream == other.stream && entry == other.entry &&
           signature == other.signature;
  }
};

struct CacheKeyHash {
  size_t operator()(const CacheKey& key) const {
    return c10::get_hash(key.device, reinterpret_cast<uintptr_t>(key.stream),
                         reinterpret_cast<uintptr_t>(key.entry), key.signature);
  }
};

// Repeatable executors, most recently used first. One cache per thread: an
// executor is rebound to new addresses before each launch, which two threads
// must not do to one executor at once.
class ExecutorCache {
 public:
  static constexpr size_t kCapacity = 512;

  struct Entry {
    aclOpExecutor* executor;
    uint64_t workspace_size;
  };

  ~ExecutorCache() {
    for (auto& [key, entry] : order_) aclDestroyAclOpExecutor(entry.executor);
  }

  Entry* find(const CacheKey& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  void insert(CacheKey key, Entry entry) {
    if (order_.size() >= kCapacity) {
      auto& oldest = order_.back();
      aclDestroyAclOpExecutor(oldest.second.executor);
      index_.erase(oldest.first);
      order_.pop_back();
      ++cache_evictions;
    }
    order_.emplace_front(std::move(key), entry);
    index_.emplace(order_.front().first, order_.begin());
  }

  void erase(const CacheKey& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    aclDestroyAclOpExecutor(it->second->second.executor);
    order_.erase(it->second);
    index_.erase(it);
  }

 private:
  std::list<std::pair<CacheKey, Entry>> order_;
  std::unordered_map<CacheKey, std::list<std::pair<CacheKey, Entry>>::iterator, CacheKeyHash> index_;
};

thread_local ExecutorCache tls_executor_cache;

void rebind(aclOpExecutor* executor, const LaunchArgs& args) {
  size_t inputs = 0;
  size_t outputs = 0;
  for (const LaunchArgs::TensorArg& t : args.tensors()) {
    const aclnnStatus status = t.is_output
                                   ? aclSetOutputTensorAddr(executor, outputs++, nullptr, t.data)
                                   : aclSetInputTensorAddr(executor, inputs++, nullptr, t.data);
    TORCH_CHECK(status == ACLNN_SUCCESS, "flagos: ", args.api(), ": rebinding argument ",
                args.arg_name(t.position), " of a cached executor failed with status ", status,
                ": ", aclGetRecentErrMsg());
  }
}

void check_devices(const LaunchArgs& args, c10::DeviceIndex device) {
  for (const LaunchArgs::TensorArg& t : args.tensors()) {
    if (t.data == nullptr) continue;  // an empty tensor has no storage
    const auto owner = device_of_pointer(t.data);
    TORCH_CHECK(owner.has_value(), "flagos device check: ", args.api(), ": argument ",
                args.arg_name(t.position), " is not flagos device memory");
    TORCH_CHECK(*owner == device, "flagos device check: ", args.api(), ": argument ",
                args.arg_name(t.position), " lives on flagos:", static_cast<int>(*owner),
                " but the launch runs on flagos:", static_cast<int>(device));
  }
}

}  // namespace

void run_two_phases(LaunchArgs& args, c10::DeviceIndex device, const void* entry_key,
                    PhaseOneCall phase_one, PhaseTwoFn phase_two) {
  if (device_check_enabled()) {
    check_devices(args, device);
  }
  aclrtStream stream = acl_stream(current_stream(device));

  const bool use_cache = executor_cache_enabled.load(std::memory_order_relaxed);
  std::optional<CacheKey> key;
  aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  bool cached = false;
  if (use_cache) {
    key = CacheKey{device, stream, entry_key, args.signature()};
    if (ExecutorCache::Entry* hit = tls_executor_cache.find(*key)) {
      ++cache_hits;
      executor = hit->executor;
      workspace_size = hit->workspace_size;
      cached = true;
      rebind(executor, args);
    } else {
      ++cache_misses;
    }
  }
  if (executor == nullptr) {
    const aclnnStatus status = phase_one(&workspace_size, &executor);
    TORCH_CHECK(status == ACLNN_SUCCESS, "flagos: ", args.api(), " failed at phase 1 (",
                args.api(), "GetWorkspaceSize) on flagos:", static_cast<int>(device),
                " with status ", status, ": ", aclGetRecentErrMsg());
    if (use_cache && aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS) {
      tls_executor_cache.insert(*key, {executor, workspace_size});
      cached = true;
    }
  }

  // The workspace lives on the launch device. Streams of one device consume
  // work in order, so the block may return to the device's pool once the
  // launch is queued.
  c10::DataPtr workspace;
  if (workspace_size > 0) {
    workspace = allocate_on(device, workspace_size);
  }
  const aclnnStatus status = phase_two(workspace.get(), workspace_size, executor, stream);
  if (status != ACLNN_SUCCESS) {
    const std::string message = aclGetRecentErrMsg();
    if (cached) tls_executor_cache.erase(*key);
    TORCH_CHECK(false, "flagos: ", args.api(), " failed at phase 2 (launch) on flagos:",
                static_cast<int>(device), " with status ", status, ": ", message);
  }
}

}  // namespace flagos
