#include "runtime/host_allocator.h"

#include <c10/util/Exception.h>
#include <c10/util/llvmMathExtras.h>

#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/acl_check.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

constexpr size_t kMinBlock = 512;

struct HostBlock {
  size_t size = 0;  // rounded
  bool allocated = false;
  std::vector<c10::Stream> uses;  // streams of non-blocking copies that used it
};

struct PendingHost {
  void* ptr = nullptr;
  BlockEvents events;
};

class PinnedPool final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) {
      return c10::DataPtr(nullptr, nullptr, &c10::detail::deleteNothing, c10::Device(c10::DeviceType::CPU));
    }
    const size_t size = std::max(kMinBlock, static_cast<size_t>(c10::llvm::PowerOf2Ceil(nbytes)));
    process_events();
    void* ptr = take_cached(size);
    if (ptr == nullptr) {
      ptr = malloc_host(size);
    }
    return c10::DataPtr(ptr, ptr, &PinnedPool::release, c10::Device(c10::DeviceType::CPU));
  }

  c10::DeleterFnPtr raw_deleter() const override { return &PinnedPool::release; }

  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }

  bool record_event(void* ptr, void* /*ctx*/, c10::Stream stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = containing(ptr);
    if (it == blocks_.end() || !it->second.allocated) {
      return false;
    }
    for (const c10::Stream& s : it->second.uses) {
      if (s == stream) return true;
    }
    it->second.uses.push_back(stream);
    return true;
  }

  bool contains(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    return containing(ptr) != blocks_.end();
  }

  // Returns every cached block to the runtime, once the copies that used
  // them are done (aclrtFreeHost does not wait).
  void empty_cache() override {
    std::deque<PendingHost> pending;
    std::vector<void*> cached;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending.swap(pending_);
      for (auto& [size, ptr] : free_) cached.push_back(ptr);
      free_.clear();
      for (const PendingHost& p : pending) cached.push_back(p.ptr);
      for (void* ptr : cached) {
        const size_t size = blocks_.at(ptr).size;
        stats_.allocations.decrease(1);
        stats_.allocated_bytes.decrease(size);
        stats_.num_host_free += 1;
        blocks_.erase(ptr);
      }
    }
    for (PendingHost& p : pending) {
      for (auto& [device, event] : p.events) {
        if (stream_wait_enabled(StreamWait::kRelease)) {
          try {
            synchronize_event(event);
          } catch (const std::exception& e) {
            TORCH_WARN("flagos: waiting for a pinned block's copies failed: ", e.what());
          }
        }
        release_event(device, event);
      }
    }
    for (void* ptr : cached) {
      const aclError status = aclrtFreeHost(ptr);
      if (status != ACL_SUCCESS) {
        TORCH_WARN("flagos: aclrtFreeHost failed with ACL error ", status, ": ", recent_error_message());
      }
    }
  }

  at::HostStats get_stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

  void reset_accumulated_stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto* stat : {&stats_.active_requests, &stats_.active_bytes, &stats_.allocations, &stats_.allocated_bytes})
      stat->reset_accumulated();
    stats_.num_host_alloc = 0;
    stats_.num_host_free = 0;
  }

  void reset_peak_stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto* stat : {&stats_.active_requests, &stats_.active_bytes, &stats_.allocations, &stats_.allocated_bytes})
      stat->reset_peak();
  }

 private:
  static void release(void* ptr);

  // Requires the mutex.
  std::map<void*, HostBlock>::iterator containing(const void* ptr) {
    auto it = blocks_.upper_bound(const_cast<void*>(ptr));
    if (it == blocks_.begin()) return blocks_.end();
    --it;
    const auto* base = static_cast<const char*>(it->first);
    return static_cast<const char*>(ptr) < base + it->second.size ? it : blocks_.end();
  }

  void* take_cached(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it == free_.end()) return nullptr;
    void* ptr = it->second;
    free_.erase(it);
    HostBlock& block = blocks_.at(ptr);
    block.allocated = true;
    block.uses.clear();
    stats_.active_requests.increase(1);
    stats_.active_bytes.increase(size);
    return ptr;
  }

  void* malloc_host(size_t size) {
    // aclrtMallocHost needs a current device; any will do.
    current_device();
    void* ptr = nullptr;
    aclError status = aclrtMallocHost(&ptr, size);
    if (status != ACL_SUCCESS) {
      empty_cache();
      status = aclrtMallocHost(&ptr, size);
    }
    TORCH_CHECK_WITH(OutOfMemoryError, status == ACL_SUCCESS, "flagos: allocating ", size,
                     " bytes of pinned host memory failed with ACL error ", status, ": ", recent_error_message());
    std::lock_guard<std::mutex> lock(mutex_);
    HostBlock block;
    block.size = size;
    block.allocated = true;
    blocks_.emplace(ptr, block);
    stats_.allocations.increase(1);
    stats_.allocated_bytes.increase(size);
    stats_.active_requests.increase(1);
    stats_.active_bytes.increase(size);
    stats_.num_host_alloc += 1;
    return ptr;
  }

  void process_events() {
    std::vector<std::pair<c10::DeviceIndex, aclrtEvent>> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pending_.empty()) return;
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (!all_complete(it->events, "a pinned block's event")) {
          ++it;
          continue;
        }
        done.insert(done.end(), it->events.begin(), it->events.end());
        free_.emplace(blocks_.at(it->ptr).size, it->ptr);
        it = pending_.erase(it);
      }
    }
    for (const auto& [device, event] : done) release_event(device, event);
  }

  // The deleter: a block no copy used is free at once; one that copies used
  // waits for events recorded on their streams now (kPinnedReuse).
  void give_back(void* ptr) {
    std::vector<c10::Stream> uses;
    size_t size = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      HostBlock& block = blocks_.at(ptr);
      block.allocated = false;
      size = block.size;
      uses.swap(block.uses);
      stats_.active_requests.decrease(1);
      stats_.active_bytes.decrease(size);
      if (uses.empty() || !stream_wait_enabled(StreamWait::kPinnedReuse)) {
        free_.emplace(size, ptr);
        return;
      }
    }
    PendingHost pending{ptr, {}};
    for (const c10::Stream& s : uses) {
      try {
        aclrtEvent event = acquire_event(s.device_index());
        pending.events.emplace_back(s.device_index(), event);
        flagos::record_event(event, s);
      } catch (const std::exception& e) {
        TORCH_WARN("flagos: recording a pinned block's use failed: ", e.what());
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(std::move(pending));
  }

  std::mutex mutex_;
  std::map<void*, HostBlock> blocks_;  // every block held from the runtime
  std::multimap<size_t, void*> free_;
  std::deque<PendingHost> pending_;
  at::HostStats stats_;
};

PinnedPool& pool() {
  static auto* instance = new PinnedPool();  // leaked: deleters may run during exit
  return *instance;
}

void PinnedPool::release(void* ptr) { pool().give_back(ptr); }

const bool host_allocator_registered = [] {
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &pool());
  return true;
}();

}  // namespace

at::HostAllocator* pinned_allocator() { return &pool(); }

bool is_pinned(const void* ptr) { return ptr != nullptr && pool().contains(ptr); }

void record_pinned_use(const void* ptr, c10::Stream stream) {
  pool().record_event(const_cast<void*>(ptr), nullptr, stream);
}

}  // namespace flagos
