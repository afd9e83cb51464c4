#include "runtime/allocator.h"

#include <c10/util/Exception.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "runtime/acl_check.h"
#include "runtime/device.h"

namespace flagos {
namespace {

constexpr size_t kRounding = 512;

struct Block {
  c10::DeviceIndex device;
  size_t size;       // rounded, as held from the pool
  size_t requested;  // as asked for
};

using c10::CachingAllocator::Stat;
using c10::CachingAllocator::StatType;
using c10::CachingDeviceAllocator::DeviceStats;

// One pool per device, and every block in it: c10's "large pool" and the
// aggregate are the same numbers here.
void update(c10::CachingAllocator::StatArray& stat, int64_t amount) {
  for (StatType type : {StatType::AGGREGATE, StatType::LARGE_POOL}) {
    Stat& one = stat[static_cast<size_t>(type)];
    if (amount >= 0) {
      one.increase(static_cast<size_t>(amount));
    } else {
      one.decrease(static_cast<size_t>(-amount));
    }
  }
}

bool caching_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("FLAGOS_ALLOC_CACHE");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

class DevicePools {
 public:
  c10::DataPtr allocate(c10::DeviceIndex device, size_t nbytes) {
    const c10::Device where = flagos_device(device);
    if (nbytes == 0) {
      return c10::DataPtr(nullptr, nullptr, &c10::detail::deleteNothing, where);
    }
    const size_t size = (nbytes + kRounding - 1) / kRounding * kRounding;
    void* ptr = take_cached(device, size, nbytes);
    if (ptr == nullptr) {
      ptr = malloc_on(device, size, nbytes);
    }
    return c10::DataPtr(ptr, ptr, &DevicePools::release, where);
  }

  DeviceStats stats(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_[device];
  }

  void reset_peak(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceStats& s = stats_[device];
    for (auto* array : {&s.allocation, &s.segment, &s.active, &s.allocated_bytes, &s.reserved_bytes,
                        &s.active_bytes, &s.requested_bytes}) {
      for (Stat& stat : *array) stat.reset_peak();
    }
  }

  void reset_accumulated(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceStats& s = stats_[device];
    for (auto* array : {&s.allocation, &s.segment, &s.active, &s.allocated_bytes, &s.reserved_bytes,
                        &s.active_bytes, &s.requested_bytes}) {
      for (Stat& stat : *array) stat.reset_accumulated();
    }
    s.num_alloc_retries = 0;
    s.num_ooms = 0;
    s.num_device_alloc = 0;
  }

  std::optional<c10::DeviceIndex> device_of(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.upper_bound(ptr);
    if (it == live_.begin()) {
      return std::nullopt;
    }
    --it;
    const auto* base = static_cast<const char*>(it->first);
    if (static_cast<const char*>(ptr) >= base + it->second.size) {
      return std::nullopt;
    }
    return it->second.device;
  }

  void empty_cache() {
    std::multimap<size_t, void*> cached[kMaxDevices];
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int d = 0; d < kMaxDevices; ++d) {
        cached[d].swap(free_[d]);
        for (const auto& entry : cached[d]) {
          update(stats_[d].reserved_bytes, -static_cast<int64_t>(entry.first));
          update(stats_[d].segment, -1);
        }
      }
    }
    for (int d = 0; d < kMaxDevices; ++d) {
      for (const auto& entry : cached[d]) {
        free_on(static_cast<c10::DeviceIndex>(d), entry.second);
      }
    }
  }

 private:
  static void release(void* ptr);

  // Requires the mutex.
  void count_live(const Block& block, int sign) {
    DeviceStats& s = stats_[block.device];
    update(s.allocation, sign);
    update(s.active, sign);
    update(s.allocated_bytes, sign * static_cast<int64_t>(block.size));
    update(s.active_bytes, sign * static_cast<int64_t>(block.size));
    update(s.requested_bytes, sign * static_cast<int64_t>(block.requested));
  }

  void* take_cached(c10::DeviceIndex device, size_t size, size_t requested) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_[device].find(size);
    if (it == free_[device].end()) {
      return nullptr;
    }
    void* ptr = it->second;
    free_[device].erase(it);
    const Block block{device, size, requested};
    live_.emplace(ptr, block);
    count_live(block, 1);
    return ptr;
  }

  void* malloc_on(c10::DeviceIndex device, size_t size, size_t requested) {
    const c10::DeviceIndex previous = exchange_device(device);
    void* ptr = nullptr;
    aclError status = aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    bool retried = false;
    if (status != ACL_SUCCESS) {
      // The pool may hold enough memory in blocks of other sizes.
      retried = true;
      set_device(previous);
      empty_cache();
      set_device(device);
      status = aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    }
    set_device(previous);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      DeviceStats& s = stats_[device];
      s.num_alloc_retries += retried ? 1 : 0;
      s.num_ooms += status != ACL_SUCCESS ? 1 : 0;
      if (status == ACL_SUCCESS) {
        const Block block{device, size, requested};
        live_.emplace(ptr, block);
        count_live(block, 1);
        s.num_device_alloc += 1;
        update(s.segment, 1);
        update(s.reserved_bytes, static_cast<int64_t>(size));
      }
    }
    TORCH_CHECK_WITH(OutOfMemoryError, status == ACL_SUCCESS, "flagos: allocating ", size,
                     " bytes on flagos:", static_cast<int>(device), " failed with ACL error ",
                     status, ": ", recent_error_message());
    return ptr;
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

  void give_back(void* ptr) {
    Block block{};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(ptr);
      TORCH_INTERNAL_ASSERT(it != live_.end(), "flagos: freeing an unknown block");
      block = it->second;
      live_.erase(it);
      count_live(block, -1);
      if (caching_enabled()) {
        free_[block.device].emplace(block.size, ptr);
        return;
      }
      update(stats_[block.device].reserved_bytes, -static_cast<int64_t>(block.size));
      update(stats_[block.device].segment, -1);
    }
    free_on(block.device, ptr);
  }

  std::mutex mutex_;
  std::map<const void*, Block> live_;  // ordered: lookups of interior pointers
  std::multimap<size_t, void*> free_[kMaxDevices];
  DeviceStats stats_[kMaxDevices];
};

DevicePools& pools() {
  // Never destroyed: deleters may run during static destruction.
  static auto* instance = new DevicePools();
  return *instance;
}

void DevicePools::release(void* ptr) { pools().give_back(ptr); }

void copy_on_device(void* dest, const void* src, std::size_t count) {
  FLAGOS_ACL_CHECK(aclrtMemcpy(dest, count, src, count, ACL_MEMCPY_DEVICE_TO_DEVICE));
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
  // The simulated streams run their work when it is queued, so a freed block
  // is free for every stream at once.
  void recordStream(const c10::DataPtr& /*ptr*/, c10::Stream /*stream*/) override {}
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
const bool registered = [] {
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

}  // namespace flagos
