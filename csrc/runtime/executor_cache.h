// The executor cache: repeatable ACLNN executors, kept per thread and
// looked up by what their phase 1 read.
//
// Phase 1 of an ACLNN operator (aclnnXGetWorkspaceSize: argument checks and
// host-side tiling) is the dominant host cost of a launch. An executor made
// repeatable (aclSetAclOpExecutorRepeatable) runs phase 2 again and again;
// between runs CANN lets the caller move its tensors
// (aclSetInputTensorAddr, aclSetOutputTensorAddr, and per list element
// aclSetDynamicInputTensorAddr) and nothing else: an aclScalar, an
// aclIntArray or a dtype was read into the tiling at phase 1 and no API
// changes it afterwards. So the key is everything a launch passes except
// tensor addresses (LaunchRecord::signature); a value that changes every
// call (a learning-rate-dependent step size) must reach the operator as a
// device tensor to hit (see csrc/handwritten/foreach.cc).
//
// Eviction is scan resistant (W-TinyLFU): a new executor enters a small
// window (LRU); when the window overflows, its oldest executor joins the
// main segment (LRU) only if it was looked up more often, recently, than the
// main segment's least recently used executor, which it then replaces. A
// cycle of more keys than the cache holds keeps the main segment's keys
// hitting instead of flushing everything (plain LRU's fate), and a stream of
// one-off keys (new scalar values, growing shapes) never pushes out a hot
// set. The frequencies come from a count-min sketch that halves its counts
// every 10 x capacity lookups, so a key that stopped being used loses to
// the new working set within a few rounds.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "flagos/acl_api.h"
#include "runtime/acl_args.h"
#include "runtime/device.h"

namespace flagos {

// FLAGOS_EXECUTOR_CACHE=0 starts with the cache off: a fresh phase 1 every
// launch (for measurements and for tests that need phase 1 to run).
void set_executor_cache_enabled(bool enabled);
namespace detail {
extern std::atomic<bool> executor_cache_on;
}  // namespace detail
inline bool executor_cache_enabled() { return detail::executor_cache_on.load(std::memory_order_relaxed); }

struct ExecutorCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t rebinds = 0;  // aclSetInputTensorAddr / aclSetOutputTensorAddr calls of hits
};
ExecutorCacheStats executor_cache_stats();
void reset_executor_cache_stats();

// The counters of the executors launched on `device`, by every thread
// (executor_cache_stats() sums the devices). `cached` (executors held now)
// is a level, which reset_executor_cache_stats leaves alone.
struct DeviceExecutorCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;  // executors destroyed to make room, or not admitted
  uint64_t rebinds = 0;
  int64_t cached = 0;
};
DeviceExecutorCacheStats executor_cache_stats(c10::DeviceIndex device);

// Misses by ACLNN operator, all devices and threads, since the last
// reset_executor_cache_stats: which launches of a loop that should be steady
// still run phase 1 (a new scalar value, a new shape).
std::map<std::string, uint64_t> executor_cache_misses_by_operator();
void count_executor_cache_miss(c10::DeviceIndex device, const char* api);

// Diagnostic switch for the negative control of the scan tests and
// benchmarks: with admission off, every window overflow replaces the main
// segment's least recently used executor, as a plain LRU does.
void set_executor_cache_admission(bool enabled);
bool executor_cache_admission();

namespace detail {
struct ExecutorCacheCounters {
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> evictions{0};
  std::atomic<uint64_t> rebinds{0};
  std::atomic<int64_t> cached{0};
};
// Shared by every thread: one relaxed increment per launch.
extern std::array<ExecutorCacheCounters, kMaxDevices> executor_cache_counters;
inline ExecutorCacheCounters& cache_counters(c10::DeviceIndex device) { return executor_cache_counters[device]; }
}  // namespace detail

// A fast hash of a cache key; the cache compares the full key on a hit.
uint64_t hash_key(c10::DeviceIndex device, aclrtStream stream, const void* entry,
                  const c10::SmallVectorImpl<uint8_t>& signature);

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

  bool matches(c10::DeviceIndex d, aclrtStream s, const void* e, const c10::SmallVectorImpl<uint8_t>& sig) const;
  void destroy();
};

// How often each key was looked up lately, approximately and in fixed
// memory: four rows of small saturating counters, a key's estimate being
// the least of its four. Every kAgingPeriod additions all counts halve.
class FrequencySketch {
 public:
  static constexpr size_t kWidth = 4096;  // counters a row: 8x the cache's capacity
  static constexpr uint8_t kMax = 15;
  static constexpr uint32_t kAgingPeriod = 5120;

  void add(uint64_t hash);
  uint8_t estimate(uint64_t hash) const;

 private:
  static size_t slot(uint64_t hash, size_t row);

  std::array<std::array<uint8_t, kWidth>, 4> counts_{};
  uint32_t additions_ = 0;
};

// One thread's repeatable executors. One cache per thread: an executor is
// rebound to new addresses before each launch, which two threads must not do
// to one executor at once. A hit allocates nothing.
class ExecutorCache {
 public:
  static constexpr size_t kCapacity = 512;
  static constexpr size_t kWindow = 16;  // the newest executors, admitted without a contest

  ExecutorCache() = default;
  ExecutorCache(const ExecutorCache&) = delete;
  ExecutorCache& operator=(const ExecutorCache&) = delete;
  ~ExecutorCache();

  // Counts the lookup in the sketch whether it hits or not.
  CachedExecutor* find(uint64_t hash, c10::DeviceIndex device, aclrtStream stream, const void* entry,
                       const c10::SmallVectorImpl<uint8_t>& signature);
  // Keeps `executor` (the window takes it; the window's oldest may then
  // replace the main segment's least recently used, or go). Returns the
  // executor, still cached when the caller's phase 2 runs: an insert never
  // evicts the executor it inserts.
  CachedExecutor& insert(CachedExecutor executor);
  void erase(uint64_t hash);

 private:
  using Entries = std::list<CachedExecutor>;
  struct Slot {
    Entries::iterator executor;
    bool in_window;
  };

  void evict(Entries& segment, Entries::iterator executor);

  Entries window_;  // most recently used first
  Entries main_;    // most recently used first
  std::unordered_map<uint64_t, Slot> index_;
  FrequencySketch sketch_;
};

// The calling thread's executor cache.
ExecutorCache& thread_executor_cache();

// Points a hit's cached aclTensor objects at the storage of `record`'s
// tensors, calling aclSet*TensorAddr only for the tensors that moved.
void rebind(CachedExecutor& hit, const LaunchRecord& record);

// The storage addresses of `record`'s tensors: inputs, then outputs.
std::vector<void*> addresses_of(const LaunchRecord& record);

// The calling thread's workspace on `stream` of `device`: at least `size`
// bytes, valid until the thread's next launch on that stream asks for more.
void* thread_workspace(c10::DeviceIndex device, aclrtStream stream, uint64_t size);

}  // namespace flagos
