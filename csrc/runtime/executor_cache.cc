#include "runtime/executor_cache.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "runtime/acl_check.h"
#include "runtime/allocator.h"

namespace flagos {

std::array<detail::ExecutorCacheCounters, kMaxDevices> detail::executor_cache_counters;

std::atomic<bool> detail::executor_cache_on{[] {
  const char* value = std::getenv("FLAGOS_EXECUTOR_CACHE");
  return value == nullptr || *value == '\0' || std::strcmp(value, "0") != 0;
}()};

void set_executor_cache_enabled(bool enabled) { detail::executor_cache_on.store(enabled); }

namespace {
std::atomic<bool> admission{true};

// Taken on misses only, which run phase 1 anyway.
std::mutex misses_by_operator_mutex;
std::map<std::string, uint64_t> misses_by_operator;
}  // namespace

void set_executor_cache_admission(bool enabled) { admission.store(enabled); }
bool executor_cache_admission() { return admission.load(std::memory_order_relaxed); }

DeviceExecutorCacheStats executor_cache_stats(c10::DeviceIndex device) {
  check_device_index(device);
  const detail::ExecutorCacheCounters& c = detail::cache_counters(device);
  return {c.hits.load(), c.misses.load(), c.evictions.load(), c.rebinds.load(), c.cached.load()};
}

ExecutorCacheStats executor_cache_stats() {
  ExecutorCacheStats total;
  for (const detail::ExecutorCacheCounters& c : detail::executor_cache_counters) {
    total.hits += c.hits.load();
    total.misses += c.misses.load();
    total.evictions += c.evictions.load();
    total.rebinds += c.rebinds.load();
  }
  return total;
}

void count_executor_cache_miss(c10::DeviceIndex device, const char* api) {
  detail::cache_counters(device).misses.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(misses_by_operator_mutex);
  ++misses_by_operator[api];
}

std::map<std::string, uint64_t> executor_cache_misses_by_operator() {
  std::lock_guard<std::mutex> lock(misses_by_operator_mutex);
  return misses_by_operator;
}

void reset_executor_cache_stats() {
  {
    std::lock_guard<std::mutex> lock(misses_by_operator_mutex);
    misses_by_operator.clear();
  }
  for (detail::ExecutorCacheCounters& c : detail::executor_cache_counters) {
    c.hits = 0;
    c.misses = 0;
    c.evictions = 0;
    c.rebinds = 0;
  }
}

// ---- the key ---------------------------------------------------------------

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

bool CachedExecutor::matches(c10::DeviceIndex d, aclrtStream s, const void* e,
                             const c10::SmallVectorImpl<uint8_t>& sig) const {
  return device == d && stream == s && entry == e && signature.size() == sig.size() &&
         std::memcmp(signature.data(), sig.data(), sig.size()) == 0;
}

void CachedExecutor::destroy() {
  aclDestroyAclOpExecutor(executor);  // first the executor, then the objects it uses
  bound.reset();
}

// ---- the frequency sketch ---------------------------------------------------

size_t FrequencySketch::slot(uint64_t hash, size_t row) {
  // One multiply per row, each with its own odd constant: four nearly
  // independent positions from the one key hash.
  static constexpr uint64_t kSeeds[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                                         0xD6E8FEB86659FD93ull};
  return static_cast<size_t>((hash * kSeeds[row]) >> 52) & (kWidth - 1);
}

void FrequencySketch::add(uint64_t hash) {
  for (size_t row = 0; row < counts_.size(); ++row) {
    uint8_t& count = counts_[row][slot(hash, row)];
    if (count < kMax) ++count;
  }
  if (++additions_ == kAgingPeriod) {
    // Aging: what was hot long ago must not keep out what is hot now.
    for (auto& row : counts_) {
      for (uint8_t& count : row) count >>= 1;
    }
    additions_ = 0;
  }
}

uint8_t FrequencySketch::estimate(uint64_t hash) const {
  uint8_t least = kMax;
  for (size_t row = 0; row < counts_.size(); ++row) {
    least = std::min(least, counts_[row][slot(hash, row)]);
  }
  return least;
}

// ---- the cache --------------------------------------------------------------

ExecutorCache::~ExecutorCache() {
  for (Entries* segment : {&window_, &main_}) {
    for (CachedExecutor& executor : *segment) {
      detail::cache_counters(executor.device).cached.fetch_sub(1, std::memory_order_relaxed);
      executor.destroy();
    }
  }
}

CachedExecutor* ExecutorCache::find(uint64_t hash, c10::DeviceIndex device, aclrtStream stream, const void* entry,
                                    const c10::SmallVectorImpl<uint8_t>& signature) {
  sketch_.add(hash);
  auto it = index_.find(hash);
  if (it == index_.end() || !it->second.executor->matches(device, stream, entry, signature)) return nullptr;
  Entries& segment = it->second.in_window ? window_ : main_;
  segment.splice(segment.begin(), segment, it->second.executor);
  return &*it->second.executor;
}

CachedExecutor& ExecutorCache::insert(CachedExecutor executor) {
  erase(executor.hash);  // a different key with the same hash: the newer one wins
  const uint64_t hash = executor.hash;
  detail::cache_counters(executor.device).cached.fetch_add(1, std::memory_order_relaxed);
  window_.push_front(std::move(executor));
  index_[hash] = Slot{window_.begin(), true};
  if (window_.size() > kWindow) {
    // The window's oldest executor joins the main segment, or goes.
    const Entries::iterator candidate = std::prev(window_.end());
    bool admit = main_.size() < kCapacity - kWindow;
    if (!admit) {
      admit = !executor_cache_admission() || sketch_.estimate(candidate->hash) > sketch_.estimate(main_.back().hash);
      if (admit) evict(main_, std::prev(main_.end()));
    }
    if (admit) {
      main_.splice(main_.begin(), window_, candidate);
      index_[main_.front().hash].in_window = false;
    } else {
      evict(window_, candidate);
    }
  }
  return window_.front();
}

void ExecutorCache::evict(Entries& segment, Entries::iterator executor) {
  detail::ExecutorCacheCounters& counters = detail::cache_counters(executor->device);
  counters.evictions.fetch_add(1, std::memory_order_relaxed);
  counters.cached.fetch_sub(1, std::memory_order_relaxed);
  index_.erase(executor->hash);
  executor->destroy();
  segment.erase(executor);
}

void ExecutorCache::erase(uint64_t hash) {
  auto it = index_.find(hash);
  if (it == index_.end()) return;
  Entries& segment = it->second.in_window ? window_ : main_;
  const Entries::iterator executor = it->second.executor;
  detail::cache_counters(executor->device).cached.fetch_sub(1, std::memory_order_relaxed);
  index_.erase(it);
  executor->destroy();
  segment.erase(executor);
}

// ---- the thread's cache, rebinding and workspaces ---------------------------

namespace {

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

}  // namespace

ExecutorCache& thread_executor_cache() { return tls_executor_cache; }

void* thread_workspace(c10::DeviceIndex device, aclrtStream stream, uint64_t size) {
  return tls_workspaces.get(device, stream, size);
}

// Points the cached executor's own aclTensor objects (the ones phase 1 was
// given) at this launch's storage, in nnopbase's input and output numbering.
// A tensor whose storage is where the object already points is left alone:
// in a loop over the same tensors (and outputs the caching allocator hands
// back at the same address) a hit makes no runtime call at all.
void rebind(CachedExecutor& hit, const LaunchRecord& record) {
  const BoundArgs& bound = *hit.bound;
  detail::ExecutorCacheCounters& counters = detail::cache_counters(hit.device);
  const size_t n_in = record.inputs().size();
  TORCH_INTERNAL_ASSERT(bound.inputs().size() == n_in && bound.outputs().size() == record.outputs().size() &&
                        hit.addresses.size() == n_in + record.outputs().size());
  for (size_t i = 0; i < n_in; ++i) {
    void* data = record.inputs()[i].data;
    if (hit.addresses[i] == data) continue;
    counters.rebinds.fetch_add(1, std::memory_order_relaxed);
    const aclnnStatus status = aclSetInputTensorAddr(hit.executor, i, bound.inputs()[i], data);
    TORCH_CHECK(status == kAclnnSuccess, "flagos: ", record.api(), ": rebinding input ",
                record.arg_name(record.inputs()[i].position), " of a cached executor failed with status ", status,
                ": ", recent_error_message());
    hit.addresses[i] = data;
  }
  for (size_t i = 0; i < record.outputs().size(); ++i) {
    void* data = record.outputs()[i].data;
    if (hit.addresses[n_in + i] == data) continue;
    counters.rebinds.fetch_add(1, std::memory_order_relaxed);
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

}  // namespace flagos
