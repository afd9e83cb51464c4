#include "runtime/acl_check.h"
#include "runtime/launch.h"

#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/op_registration/adaption.h>
#include <c10/util/Exception.h>
#include <c10/util/hash.h>

#include <cstdlib>
#include <cstring>
#include <list>
#include <unordered_map>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/stream.h"

namespace flagos {

// ---- guard ---------------------------------------------------------------

std::atomic<bool> detail::guards_enabled{true};

void set_guards_enabled(bool enabled) { detail::guards_enabled.store(enabled); }

std::atomic<bool> detail::composite_guards_enabled{true};

void set_composite_guards_enabled(bool enabled) { detail::composite_guards_enabled.store(enabled); }

void LaunchGuard::restore() noexcept {
  try {
    set_device(previous_);
  } catch (const std::exception& e) {
    TORCH_WARN("flagos: restoring flagos:", static_cast<int>(previous_),
               " after a launch failed: ", e.what());
  }
}

void CompositeGuard::restore() noexcept {
  try {
    set_device(previous_);
  } catch (const std::exception& e) {
    TORCH_WARN("flagos: restoring flagos:", static_cast<int>(previous_), " after a composite op failed: ", e.what());
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

void check_written(const at::Tensor& written, std::initializer_list<DeviceCheckArg> inputs) {
  at::assert_no_internal_overlap(written);
  for (const DeviceCheckArg& input : inputs) {
    for (const at::Tensor& tensor : input.tensors) {
      if (tensor.defined() && !tensor.is_same(written)) {
        at::assert_no_partial_overlap(written, tensor);
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
std::atomic<uint64_t> cache_rebinds{0};

}  // namespace

void set_device_check_enabled(bool enabled) { device_check.store(enabled); }
bool device_check_enabled() { return device_check.load(std::memory_order_relaxed); }
void set_executor_cache_enabled(bool enabled) { executor_cache_enabled.store(enabled); }

ExecutorCacheStats executor_cache_stats() {
  return {cache_hits.load(), cache_misses.load(), cache_evictions.load(), cache_rebinds.load()};
}

void reset_executor_cache_stats() {
  cache_hits = 0;
  cache_misses = 0;
  cache_evictions = 0;
  cache_rebinds = 0;
}

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

// ---- executor cache --------------------------------------------------------

namespace {

// A fast hash of the key; the cache compares the full key on a hit.
uint64_t hash_key(c10::DeviceIndex device, aclrtStream stream, const void* entry,
                  const c10::SmallVectorImpl<uint8_t>& signature) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(device);
  auto mix = [&h](uint64_t word) {
    h ^= word;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  mix(reinterpret_cast<uintptr_t>(stream));
  mix(reinterpret_cast<uintptr_t>(entry));
  const uint8_t* bytes = signature.data();
  size_t size = signature.size();
  mix(size);
  for (; size >= 8; bytes += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    mix(word);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes, size);
  mix(tail);
  return h;
}

struct CachedExecutor {
  uint64_t hash;
  c10::DeviceIndex device;
  aclrtStream stream;
  const void* entry;
  std::vector<uint8_t> signature;
  aclOpExecutor* executor;
  uint64_t workspace_size;
  std::unique_ptr<BoundArgs> bound;  // the objects the executor was built with
  // The storage address each of those aclTensor objects holds now (inputs,
  // then outputs): the one it was created with, then the one the last
  // rebinding set. Only this cache rebinds them, so an address that has not
  // changed needs no aclSet*TensorAddr call.
  std::vector<void*> addresses;

  bool matches(c10::DeviceIndex d, aclrtStream s, const void* e, const c10::SmallVectorImpl<uint8_t>& sig) const {
    return device == d && stream == s && entry == e && signature.size() == sig.size() &&
           std::memcmp(signature.data(), sig.data(), sig.size()) == 0;
  }
  void destroy() {
    aclDestroyAclOpExecutor(executor);  // first the executor, then the objects it uses
    bound.reset();
  }
};

// Repeatable executors, most recently used first. One cache per thread: an
// executor is rebound to new addresses before each launch, which two threads
// must not do to one executor at once. A hit allocates nothing.
class ExecutorCache {
 public:
  static constexpr size_t kCapacity = 512;

  ~ExecutorCache() {
    for (CachedExecutor& entry : order_) entry.destroy();
  }

  CachedExecutor* find(uint64_t hash, c10::DeviceIndex device, aclrtStream stream, const void* entry,
                       const c10::SmallVectorImpl<uint8_t>& signature) {
    auto it = index_.find(hash);
    if (it == index_.end() || !it->second->matches(device, stream, entry, signature)) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &*it->second;
  }

  void insert(CachedExecutor entry) {
    erase(entry.hash);  // a different key with the same hash: the newer one wins
    if (order_.size() >= kCapacity) {
      erase(order_.back().hash);
      ++cache_evictions;
    }
    order_.push_front(std::move(entry));
    index_.emplace(order_.front().hash, order_.begin());
  }

  void erase(uint64_t hash) {
    auto it = index_.find(hash);
    if (it == index_.end()) return;
    it->second->destroy();
    order_.erase(it->second);
    index_.erase(it);
  }

 private:
  std::list<CachedExecutor> order_;
  std::unordered_map<uint64_t, std::list<CachedExecutor>::iterator> index_;
};

thread_local ExecutorCache tls_executor_cache;

// The workspace a thread's launches on one stream share, as PyTorch keeps a
// cuBLAS workspace per handle and stream: launches on a stream run in order,
// so one block serves them all, and a launch costs no allocation and free.
// A block only grows; while held it counts in memory_allocated. Per thread,
// like the executor cache: another thread's launch on the same stream could
// otherwise free the block between this one's lookup and its enqueue.
class StreamWorkspaces {
 public:
  void* get(c10::DeviceIndex device, aclrtStream stream, uint64_t size) {
    Held* held = nullptr;
    for (Held& h : held_) {
      if (h.device == device && h.stream == stream) {
        held = &h;
        break;
      }
    }
    if (held == nullptr) {
      held = &held_.emplace_back(Held{device, stream, 0, c10::DataPtr()});
    }
    if (held->size < size) {
      // The old block goes back to this stream's pool first: work queued on
      // the stream that still uses it runs before anything that reuses it.
      held->block.clear();
      held->size = 0;
      held->block = allocate_on(device, size);
      held->size = size;
    }
    return held->block.get();
  }

 private:
  struct Held {
    c10::DeviceIndex device;
    aclrtStream stream;
    uint64_t size;
    c10::DataPtr block;
  };
  std::vector<Held> held_;  // one per (device, stream) this thread launched on
};

thread_local StreamWorkspaces tls_workspaces;

// Points the cached executor's own aclTensor objects (the ones phase 1 was
// given) at this launch's storage, in nnopbase's input and output numbering.
// A tensor whose storage is where the object already points is left alone:
// in a loop over the same tensors (and outputs the caching allocator hands
// back at the same address) a hit makes no runtime call at all.
void rebind(CachedExecutor& hit, const LaunchRecord& record) {
  const BoundArgs& bound = *hit.bound;
  const size_t n_in = record.inputs().size();
  TORCH_INTERNAL_ASSERT(bound.inputs().size() == n_in && bound.outputs().size() == record.outputs().size() &&
                        hit.addresses.size() == n_in + record.outputs().size());
  for (size_t i = 0; i < n_in; ++i) {
    void* data = record.inputs()[i].data;
    if (hit.addresses[i] == data) continue;
    ++cache_rebinds;
    const aclnnStatus status = aclSetInputTensorAddr(hit.executor, i, bound.inputs()[i], data);
    TORCH_CHECK(status == kAclnnSuccess, "flagos: ", record.api(), ": rebinding input ",
                record.arg_name(record.inputs()[i].position), " of a cached executor failed with status ", status,
                ": ", recent_error_message());
    hit.addresses[i] = data;
  }
  for (size_t i = 0; i < record.outputs().size(); ++i) {
    void* data = record.outputs()[i].data;
    if (hit.addresses[n_in + i] == data) continue;
    ++cache_rebinds;
    const aclnnStatus status = aclSetOutputTensorAddr(hit.executor, i, bound.outputs()[i], data);
    TORCH_CHECK(status == kAclnnSuccess, "flagos: ", record.api(), ": rebinding output ",
                record.arg_name(record.outputs()[i].position), " of a cached executor failed with status ",
                status, ": ", recent_error_message());
    hit.addresses[n_in + i] = data;
  }
}

std::vector<void*> addresses_of(const LaunchRecord& record) {
  std::vector<void*> out;
  out.reserve(record.inputs().size() + record.outputs().size());
  for (const TensorAddress& t : record.inputs()) out.push_back(t.data);
  for (const TensorAddress& t : record.outputs()) out.push_back(t.data);
  return out;
}

void check_devices(const LaunchRecord& record, c10::DeviceIndex device) {
  for (const auto* tensors : {&record.inputs(), &record.outputs()}) {
    for (const TensorAddress& t : *tensors) {
      if (t.data == nullptr) continue;  // an empty tensor has no storage
      const auto owner = device_of_pointer(t.data);
      TORCH_CHECK(owner.has_value(), "flagos device check: ", record.api(), ": argument ",
                  record.arg_name(t.position), " is not flagos device memory");
      TORCH_CHECK(*owner == device, "flagos device check: ", record.api(), ": argument ",
                  record.arg_name(t.position), " lives on flagos:", static_cast<int>(*owner),
                  " but the launch runs on flagos:", static_cast<int>(device));
    }
  }
}

// Destroys a phase-1 executor that will never reach phase 2 (phase 2 of a
// non-repeatable executor destroys it).
struct UnlaunchedExecutor {
  aclOpExecutor* executor = nullptr;
  ~UnlaunchedExecutor() {
    if (executor != nullptr) aclDestroyAclOpExecutor(executor);
  }
};

}  // namespace

void run_launch(const LaunchRecord& record, c10::DeviceIndex device, const void* entry, PhaseOneCall phase_one,
                PhaseTwoFn phase_two) {
  check_not_forked();
  if (device_check_enabled()) {
    check_devices(record, device);
  }
  aclrtStream stream = acl_stream(current_stream(device));

  const bool use_cache = executor_cache_enabled.load(std::memory_order_relaxed);
  uint64_t hash = 0;
  aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  bool cached = false;
  std::unique_ptr<BoundArgs> bound;  // a miss's objects, until phase 2 has run or the cache keeps them
  UnlaunchedExecutor unlaunched;
  if (use_cache) {
    const phases::Span cache_span(phases::kCache);
    hash = hash_key(device, stream, entry, record.signature());
    if (CachedExecutor* hit = tls_executor_cache.find(hash, device, stream, entry, record.signature())) {
      ++cache_hits;
      executor = hit->executor;
      workspace_size = hit->workspace_size;
      cached = true;
      rebind(*hit, record);
    } else {
      ++cache_misses;
    }
  }
  if (executor == nullptr) {
    const phases::Span phase_one_span(phases::kPhaseOne);
    bound = std::make_unique<BoundArgs>(record);
    const aclnnStatus status = phase_one(*bound, &workspace_size, &executor);
    if (status == kAclnnErrParamInvalid && (record.uncommon_dtype() || record.max_dims() > 8)) {
      const std::string tag = record.uncommon_dtype() ? std::string(c10::toString(*record.uncommon_dtype()))
                                                      : c10::str(record.max_dims(), " dims");
      throw DtypeUnsupported(record.api(), tag,
                             c10::str("flagos: ", record.api(), " rejected its arguments (status ", status,
                                      ") with a ", tag, " argument: ", recent_error_message()));
    }
    TORCH_CHECK(status == kAclnnSuccess, "flagos: ", record.api(), " failed at phase 1 (", record.api(),
                "GetWorkspaceSize) on flagos:", static_cast<int>(device), " with status ", status, ": ",
                recent_error_message());
    if (use_cache && aclSetAclOpExecutorRepeatable(executor) == kAclnnSuccess) {
      bound->detach();
      tls_executor_cache.insert(CachedExecutor{hash, device, stream, entry,
                                               std::vector<uint8_t>(record.signature().begin(),
                                                                    record.signature().end()),
                                               executor, workspace_size, std::move(bound),
                                               addresses_of(record)});
      cached = true;
    } else {
      unlaunched.executor = executor;
    }
  }

  // The workspace lives on the launch device: the launch stream's block.
  void* workspace = workspace_size > 0 ? tls_workspaces.get(device, stream, workspace_size) : nullptr;
  unlaunched.executor = nullptr;  // phase 2 consumes a non-repeatable executor, whatever its outcome
  aclnnStatus status;
  {
    const phases::Span phase_two_span(phases::kPhaseTwo);
    status = phase_two(workspace, workspace_size, executor, stream);
  }
  if (status != kAclnnSuccess) {
    const std::string message = recent_error_message();
    if (cached) tls_executor_cache.erase(hash);
    TORCH_CHECK(false, "flagos: ", record.api(), " failed at phase 2 (launch) on flagos:", static_cast<int>(device),
                " with status ", status, ": ", message);
  }
}

}  // namespace flagos
