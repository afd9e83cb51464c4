#include "runtime/executor_cache.h"

#include <algorithm>
#include <cstring>

namespace flagos {

std::array<detail::ExecutorCacheCounters, kMaxDevices> detail::executor_cache_counters;

namespace {
std::atomic<bool> admission{true};
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

void reset_executor_cache_stats() {
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

}  // namespace flagos
