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
  size_t size;
};

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
    void* ptr = take_cached(device, size);
    if (ptr == nullptr) {
      ptr = malloc_on(device, size);
    }
    return c10::DataPtr(ptr, ptr, &DevicePools::release, where);
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

  MemoryStats stats(c10::DeviceIndex device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_[device];
  }

  void empty_cache() {
    std::multimap<size_t, void*> cached[kMaxDevices];
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int d = 0; d < kMaxDevices; ++d) {
        cached[d].swap(free_[d]);
        for (const auto& entry : cached[d]) {
          stats_[d].reserved_bytes -= entry.first;
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

  void* take_cached(c10::DeviceIndex device, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_[device].find(size);
    if (it == free_[device].end()) {
      return nullptr;
    }
    void* ptr = it->second;
    free_[device].erase(it);
    live_.emplace(ptr, Block{device, size});
    stats_[device].allocated_bytes += size;
    stats_[device].live_blocks += 1;
    return ptr;
  }

  void* malloc_on(c10::DeviceIndex device, size_t size) {
    const c10::DeviceIndex previous = exchange_device(device);
    void* ptr = nullptr;
    aclError status = aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    if (status != ACL_SUCCESS) {
      // The pool may hold enough memory in blocks of other sizes.
      set_device(previous);
      empty_cache();
      set_device(device);
      status = aclrtMalloc(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    }
    set_device(previous);
    TORCH_CHECK_WITH(OutOfMemoryError, status == ACL_SUCCESS, "flagos: allocating ", size,
                     " bytes on flagos:", static_cast<int>(device), " failed with ACL error ",
                     status, ": ", recent_error_message());
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(ptr, Block{device, size});
    stats_[device].allocated_bytes += size;
    stats_[device].reserved_bytes += size;
    stats_[device].live_blocks += 1;
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
      stats_[block.device].allocated_bytes -= block.size;
      stats_[block.device].live_blocks -= 1;
      if (caching_enabled()) {
        free_[block.device].emplace(block.size, ptr);
        return;
      }
      stats_[block.device].reserved_bytes -= block.size;
    }
    free_on(block.device, ptr);
  }

  std::mutex mutex_;
  std::map<const void*, Block> live_;  // ordered: lookups of interior pointers
  std::multimap<size_t, void*> free_[kMaxDevices];
  MemoryStats stats_[kMaxDevices];
};

DevicePools& pools() {
  // Never destroyed: deleters may run during static destruction.
  static auto* instance = new DevicePools();
  return *instance;
}

void DevicePools::release(void* ptr) { pools().give_back(ptr); }

class FlagosAllocator final : public c10::Allocator {
 public:
  // -1: the current device.
  explicit FlagosAllocator(c10::DeviceIndex device = -1) : device_(device) {}
  c10::DataPtr allocate(size_t nbytes) override {
    return pools().allocate(device_ >= 0 ? device_ : current_device(), nbytes);
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    FLAGOS_ACL_CHECK(aclrtMemcpy(dest, count, src, count, ACL_MEMCPY_DEVICE_TO_DEVICE));
  }

 private:
  c10::DeviceIndex device_;
};

FlagosAllocator current_device_allocator;

}  // namespace

c10::Allocator* device_allocator() { return &current_device_allocator; }

c10::Allocator* device_allocator(c10::DeviceIndex device) {
  static const auto* per_device = [] {
    auto* allocators = new std::array<FlagosAllocator, kMaxDevices>();
    for (int d = 0; d < kMaxDevices; ++d) {
      (*allocators)[d] = FlagosAllocator(static_cast<c10::DeviceIndex>(d));
    }
    return allocators;
  }();
  check_device_index(device);
  return const_cast<FlagosAllocator*>(&(*per_device)[device]);
}

c10::DataPtr allocate_on(c10::DeviceIndex device, size_t nbytes) {
  check_device_index(device);
  return pools().allocate(device, nbytes);
}

std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr) {
  return pools().device_of(ptr);
}

MemoryStats memory_stats(c10::DeviceIndex device) {
  check_device_index(device);
  return pools().stats(device);
}

void empty_cache() { pools().empty_cache(); }

}  // namespace flagos
