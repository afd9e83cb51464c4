#include "runtime/allocator.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/acl_check.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

constexpr size_t kRounding = 512;

struct Block {
  void* ptr = nullptr;
  c10::DeviceIndex device = -1;
  size_t size = 0;       // rounded, as held from the pool
  size_t requested = 0;  // as asked for
  c10::StreamId stream = 0;          // the stream of `device` it was allocated for: its pool
  std::vector<c10::Stream> uses;     // other streams that used it (recordStream)
  bool live = false;                 // handed out (else cached, or waiting for other streams)
  std::vector<Block*>* free_list = nullptr;  // its (stream, size) list: a free is a push

  c10::Stream own_stream() const { return c10::Stream(c10::Stream::UNSAFE, flagos_device(device), stream); }
};

// A freed block that waits for the events recorded on the streams that used it.
struct Pending {
  Block* block = nullptr;
  BlockEvents events;
};

using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

// One pool per device, and every block in it: c10's "large pool" and the
// aggregate are the same numbers here, so only the aggregate is counted
// (twice per allocation and free) and stats() copies it.
void update(c10::CachingAllocator::StatArray& stat, int64_t amount) {
  Stat& one = stat[static_cast<size_t>(StatType::AGGREGATE)];
  if (amount >= 0) {
    one.increase(static_cast<size_t>(amount));
  } else {
    one.decrease(static_cast<size_t>(-amount));
  }
}

// Every per-pool statistic of a device, for the readers and the resets.
template <typename Fn>
void for_each_stat_array(DeviceStats& s, Fn&& fn) {
  for (auto* array : {&s.allocation, &s.segment, &s.active, &s.allocated_bytes, &s.reserved_bytes,
                      &s.active_bytes, &s.requested_bytes}) {
    fn(*array);
  }
}

bool caching_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("FLAGOS_ALLOC_CACHE");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

// The free blocks of one device, by the stream they belong to and their
// size. Each list is a stack: the most recently freed block is taken first,
// and a warm loop pushes and pops without touching the heap.
struct FreeKey {
  c10::StreamId stream;
  size_t size;
  bool operator==(const FreeKey&) const = default;
};

struct FreeKeyHash {
  size_t operator()(const FreeKey& k) const noexcept {
    return std::hash<uint64_t>()(static_cast<uint64_t>(k.stream) * 0x9E3779B97F4A7C15ull ^ k.size);
  }
};

using FreeBlocks = std::unordered_map<FreeKey, std::vector<Block*>, FreeKeyHash>;

// A deleter must not throw: runtime failures while freeing become warnings.
template <typename Fn>
void without_throwing(const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    TORCH_WARN("flagos: ", what, " failed: ", e.what());
  }
}

class DevicePools {
 public:
  c10::DataPtr allocate(c10::DeviceIndex device, size_t nbytes) {
    check_not_forked();
    const c10::Device where = flagos_device(device);
    if (nbytes == 0) {
      return c10::DataPtr(nullptr, nullptr, &c10::detail::deleteNothing, where);
    }
    const size_t size = (nbytes + kRounding - 1) / kRounding * kRounding;
    const c10::StreamId stream = current_stream(device).id();
    process_events();
    Block* block = take_cached(device, stream, size, nbytes);
    if (block == nullptr) {
      block = malloc_on(device, stream, size, nbytes);
    }
    // The context is the block itself: the deleter finds it without a lookup.
    return c10::DataPtr(block->ptr, block, &DevicePools::release, where);
  }

  static bool owns(const c10::DataPtr& ptr) { return ptr.get_deleter() == &DevicePools::release; }

  void record_stream(const c10::DataPtr& ptr, c10::Stream stream) {
    if (ptr.get() == nullptr || !owns(ptr)) {
      return;
    }
    TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1, "flagos: record_stream takes a flagos stream, got ",
                stream);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(ptr.get());
    TORCH_CHECK(it != blocks_.end() && it->second.live, "flagos: record_stream of memory the allocator does not hold");
    Block& block = it->second;
    if (stream == block.own_stream()) {
      return;
    }
    for (const c10::Stream& s : block.uses) {
      if (s == stream) return;
    }
    block.uses.push_back(stream);
  }

  DeviceStats stats(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceStats s = stats_[device];
    for_each_stat_array(s, [](c10::CachingAllocator::StatArray& array) {
      array[static_cast<size_t>(StatType::LARGE_POOL)] = array[static_cast<size_t>(StatType::AGGREGATE)];
    });
    return s;
  }

  void reset_peak(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    for_each_stat_array(stats_[device], [](c10::CachingAllocator::StatArray& array) {
      for (Stat& stat : array) stat.reset_peak();
    });
  }

  void reset_accumulated(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceStats& s = stats_[device];
    for_each_stat_array(s, [](c10::CachingAllocator::StatArray& array) {
      for (Stat& stat : array) stat.reset_accumulated();
    });
    s.num_alloc_retries = 0;
    s.num_ooms = 0;
    s.num_device_alloc = 0;
    s.num_sync_all_streams = 0;
  }

  std::optional<c10::DeviceIndex> device_of(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.upper_bound(ptr);
    if (it == blocks_.begin()) {
      return std::nullopt;
    }
    --it;
    const auto* base = static_cast<const char*>(it->first);
    if (!it->second.live || static_cast<const char*>(ptr) >= base + it->second.size) {
      return std::nullopt;
    }
    return it->second.device;
  }

  // Returns every cached block to the runtime. Blocks still waiting for
  // other streams' events wait for them; then each stream that last used a
  // block is waited for, because aclrtFree does not wait (kRelease).
  void empty_cache() {
    std::deque<Pending> pending;
    std::vector<std::pair<void*, Block>> cached;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending.swap(pending_);
      pending_count_ = 0;
      for (int d = 0; d < kMaxDevices; ++d) {
        // The lists stay (live blocks point at theirs); their blocks go.
        for (auto& [key, list] : free_[d]) {
          for (Block* block : list) cached.emplace_back(block->ptr, *block);
          list.clear();
        }
      }
      for (const Pending& p : pending) cached.emplace_back(p.block->ptr, *p.block);
      for (const auto& [ptr, block] : cached) {
        blocks_.erase(ptr);
        update(stats_[block.device].reserved_bytes, -static_cast<int64_t>(block.size));
        update(stats_[block.device].segment, -1);
      }
    }
    const bool wait = stream_wait_enabled(StreamWait::kRelease);
    for (Pending& p : pending) {
      for (auto& [device, event] : p.events) {
        if (wait) without_throwing("waiting for a freed block's streams", [&] { synchronize_event(event); });
        release_event(device, event);
      }
    }
    if (wait) {
      std::vector<c10::Stream> streams;
      for (const auto& [ptr, block] : cached) {
        const c10::Stream s = block.own_stream();
        if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
      }
      for (const c10::Stream& s : streams) without_throwing("waiting for a stream before freeing", [&] { wait_on_host(s); });
    }
    for (const auto& [ptr, block] : cached) free_on(block.device, ptr);
  }

 private:
  static void release(void* context);

  // Requires the mutex.
  void count_live(const Block& block, int sign) {
    DeviceStats& s = stats_[block.device];
    update(s.allocation, sign);
    update(s.active, sign);
    update(s.allocated_bytes, sign * static_cast<int64_t>(block.size));
    update(s.active_bytes, sign * static_cast<int64_t>(block.size));
    update(s.requested_bytes, sign * static_cast<int64_t>(block.requested));
  }

  // Moves the blocks whose events have all completed back to their pools.
  void process_events() {
    if (pending_count_.load(std::memory_order_relaxed) == 0) return;  // most calls: skip the lock
    std::vector<std::pair<c10::DeviceIndex, aclrtEvent>> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (!all_complete(it->events, "a freed block's event")) {
          ++it;
          continue;
        }
        done.insert(done.end(), it->events.begin(), it->events.end());
        cache(it->block);
        it = pending_.erase(it);
      }
      pending_count_ = pending_.size();
    }
    for (const auto& [device, event] : done) release_event(device, event);
  }

  // Requires the mutex. Puts a free block in its stream's pool.
  void cache(Block* block) { block->free_list->push_back(block); }

  // The most recently freed block of the size: an op that frees and
  // allocates the same sizes (its output, its workspace) then gets the same
  // addresses every time, so that its cached executor needs no rebinding
  // and the runtime's launch check of the last launch still holds.
  Block* take_cached(c10::DeviceIndex device, c10::StreamId stream, size_t size, size_t requested) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_[device].find(FreeKey{stream, size});
    if (it == free_[device].end() || it->second.empty()) {
      return nullptr;
    }
    Block* block = it->second.back();
    it->second.pop_back();
    block->live = true;
    block->requested = requested;
    block->uses.clear();
    count_live(*block, 1);
    return block;
  }

  Block* malloc_on(c10::DeviceIndex device, c10::StreamId stream, size_t size, size_t requested) {
    const c10::DeviceIndex previous = exchange_device(device);
    void* ptr = nullptr;
    aclError status = aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    bool retried = false;
    if (status != ACL_SUCCESS) {
      // The pool may hold enough memory in blocks of other sizes or streams.
      retried = true;
      set_device(previous);
      empty_cache();
      set_device(device);
      status = aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    }
    set_device(previous);
    Block* made = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      DeviceStats& s = stats_[device];
      s.num_alloc_retries += retried ? 1 : 0;
      s.num_ooms += status != ACL_SUCCESS ? 1 : 0;
      if (status == ACL_SUCCESS) {
        Block block;
        block.ptr = ptr;
        block.device = device;
        block.size = size;
        block.requested = requested;
        block.stream = stream;
        block.live = true;
        block.free_list = &free_[device][FreeKey{stream, size}];  // mapped values do not move
        made = &blocks_.emplace(ptr, block).first->second;
        count_live(block, 1);
        s.num_device_alloc += 1;
        update(s.segment, 1);
        update(s.reserved_bytes, static_cast<int64_t>(size));
      }
    }
    TORCH_CHECK_WITH(OutOfMemoryError, status == ACL_SUCCESS, "flagos: allocating ", size,
                     " bytes on flagos:", static_cast<int>(device), " failed with ACL error ",
                     status, ": ", recent_error_message());
    return made;
  }

  static void free_on(c10::DeviceIndex device, void* ptr) {
    const c10::DeviceIndex previous = exchange_device(device);
    const aclError status = aclrtFree(ptr);
    set_device(previous);
    if (status != ACL_SUCCESS) {
      // A deleter must not throw; a failed free is a runtime bug worth a warning.
      TORCH_WARN("flagos: aclrtFree failed with ACL error ", status, ": ", recent_error_message());
    }
  }

  // The deleter. A block only its own stream used goes back to that
  // stream's pool at once; one that other streams used waits for events
  // recorded on them now (kBlockReuse). Without caching, the block goes back
  // to the runtime once every stream that used it is done (kRelease).
  void give_back(Block* live) {
    Block block;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      TORCH_INTERNAL_ASSERT(live->live, "flagos: freeing a block that is not live");
      live->live = false;
      count_live(*live, -1);
      if (caching_enabled() && (live->uses.empty() || !stream_wait_enabled(StreamWait::kBlockReuse))) {
        cache(live);
        return;
      }
      block = *live;
      if (!caching_enabled()) {
        blocks_.erase(block.ptr);  // `live` dangles from here
        update(stats_[block.device].reserved_bytes, -static_cast<int64_t>(block.size));
        update(stats_[block.device].segment, -1);
      }
    }
    if (caching_enabled()) {
      // A cached block stays in blocks_, so `live` stays valid while it waits.
      Pending pending{live, {}};
      for (const c10::Stream& s : block.uses) {
        without_throwing("recording a freed block's use", [&] {
          aclrtEvent event = acquire_event(s.device_index());
          pending.events.emplace_back(s.device_index(), event);
          record_event(event, s);
        });
      }
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(std::move(pending));
      pending_count_ = pending_.size();
      return;
    }
    if (stream_wait_enabled(StreamWait::kRelease)) {
      without_throwing("waiting for a freed block's streams", [&] {
        wait_on_host(block.own_stream());
        for (const c10::Stream& s : block.uses) wait_on_host(s);
      });
    }
    free_on(block.device, block.ptr);
  }

  std::mutex mutex_;
  // Every block held from the runtime, live or not; ordered: lookups of
  // interior pointers. Its nodes do not move: a live block's DataPtr and the
  // free lists point at them.
  std::map<const void*, Block> blocks_;
  // Free blocks per device (nodes of blocks_).
  FreeBlocks free_[kMaxDevices];
  std::deque<Pending> pending_;          // freed blocks waiting for other streams
  std::atomic<size_t> pending_count_{0};  // pending_.size(), readable without the mutex
  DeviceStats stats_[kMaxDevices];
};

DevicePools& pools() {
  // Never destroyed: deleters may run during static destruction.
  static auto* instance = new DevicePools();
  return *instance;
}

void DevicePools::release(void* context) { pools().give_back(static_cast<Block*>(context)); }

// A device-to-device copy queued on the current stream of the destination's
// device: after the work that stream has queued on either block.
void copy_on_device(void* dest, const void* src, std::size_t count) {
  if (count == 0) return;
  const c10::DeviceIndex device = pools().device_of(dest).value_or(current_device());
  const c10::DeviceIndex previous = exchange_device(device);
  const aclError status =
      aclrtMemcpyAsync(dest, count, src, count, ACL_MEMCPY_DEVICE_TO_DEVICE, acl_stream(current_stream(device)));
  set_device(previous);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: copying ", count, " bytes on flagos:", static_cast<int>(device),
              " failed with ACL error ", status, ": ", recent_error_message());
}

// Bound to one device: what flagos storages keep, so that a storage grows on
// its own device.
class BoundAllocator final : public c10::Allocator {
 public:
  explicit BoundAllocator(c10::DeviceIndex device = 0) : device_(device) {}
  c10::DataPtr allocate(size_t nbytes) override { return pools().allocate(device_, nbytes); }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    copy_on_device(dest, src, count);
  }

 private:
  c10::DeviceIndex device_;
};

// What c10 hands out for PrivateUse1: allocates on the current device, and
// answers torch.accelerator's memory API for every device.
class FlagosAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override { return pools().allocate(current_device(), nbytes); }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    copy_on_device(dest, src, count);
  }

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t /*mempool_id*/) override { pools().empty_cache(); }
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override { pools().record_stream(ptr, stream); }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override { return memory_info(device); }
  DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_device_index(device);
    return pools().stats(device);
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_device_index(device);
    pools().reset_accumulated(device);
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    check_device_index(device);
    pools().reset_peak(device);
  }
};

FlagosAllocator current_device_allocator;

// c10 hands this allocator out for PrivateUse1: torch.UntypedStorage(n,
// device="flagos:1"), storage.clone(), torch.load and deepcopy allocate
// through it (they make the storage's device current first).
const bool allocator_registered = [] {
  c10::SetAllocator(c10::DeviceType::PrivateUse1, &current_device_allocator);
  return true;
}();

}  // namespace

c10::DeviceAllocator* device_allocator() { return &current_device_allocator; }

c10::Allocator* device_allocator(c10::DeviceIndex device) {
  static auto* per_device = [] {
    auto* allocators = new std::array<BoundAllocator, kMaxDevices>();
    for (int d = 0; d < kMaxDevices; ++d) {
      (*allocators)[d] = BoundAllocator(static_cast<c10::DeviceIndex>(d));
    }
    return allocators;
  }();
  check_device_index(device);
  return &(*per_device)[device];
}

c10::DataPtr allocate_on(c10::DeviceIndex device, size_t nbytes) {
  check_device_index(device);
  return pools().allocate(device, nbytes);
}

std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr) {
  return pools().device_of(ptr);
}

DeviceStats device_stats(c10::DeviceIndex device) {
  check_device_index(device);
  return pools().stats(device);
}

void reset_peak_stats(c10::DeviceIndex device) {
  check_device_index(device);
  pools().reset_peak(device);
}

void reset_accumulated_stats(c10::DeviceIndex device) {
  check_device_index(device);
  pools().reset_accumulated(device);
}

void empty_cache() { pools().empty_cache(); }

void record_stream(const c10::DataPtr& ptr, c10::Stream stream) { pools().record_stream(ptr, stream); }

std::pair<size_t, size_t> memory_info(c10::DeviceIndex device) {
  check_device_index(device);
  const c10::DeviceIndex previous = exchange_device(device);
  size_t free = 0, total = 0;
  const aclError status = aclrtGetMemInfo(ACL_HBM_MEM, &free, &total);
  set_device(previous);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: aclrtGetMemInfo on flagos:", static_cast<int>(device),
              " failed with ACL error ", status, ": ", recent_error_message());
  return {free, total};
}

}  // namespace flagos
