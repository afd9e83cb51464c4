#include "runtime/host_allocator.h"

#include <c10/util/Exception.h>

#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/acl_check.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

// An event recorded on a stream that used a pinned block when the block was
// freed. ATen's caching host allocator keeps the block out of its free lists
// until each such event has completed, then destroys the event: that hands
// it back to its device's pool.
class PinnedUseEvent {
 public:
  PinnedUseEvent(c10::DeviceIndex device, aclrtEvent event) : device_(device), event_(event) {}
  PinnedUseEvent(PinnedUseEvent&& other) noexcept : device_(other.device_), event_(std::exchange(other.event_, nullptr)) {}
  PinnedUseEvent& operator=(PinnedUseEvent&& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(event_, other.event_);
    return *this;
  }
  PinnedUseEvent(const PinnedUseEvent&) = delete;
  PinnedUseEvent& operator=(const PinnedUseEvent&) = delete;
  ~PinnedUseEvent() {
    if (event_ != nullptr) release_event(device_, event_);
  }

  aclrtEvent get() const { return event_; }
  bool complete() const { return all_complete({{device_, event_}}, "a pinned block's event"); }

 private:
  c10::DeviceIndex device_;
  aclrtEvent event_;
};

using PinnedBlock = at::HostBlock<c10::Stream>;

// The runtime hooks of ATen's caching host allocator (the caching, the
// deferred reuse of blocks that non-blocking copies used, the statistics are
// ATen's), plus the block table that answers "is this address pinned" for
// any address inside a block, as isPinnedPtr and copies ask it.
class PinnedPool final : public at::CachingHostAllocatorImpl<c10::Stream, PinnedUseEvent> {
 public:
  // The start of the block holding `ptr`, or nullptr.
  void* block_start(const void* ptr) {
    std::lock_guard<std::mutex> lock(held_mutex_);
    auto it = held_.upper_bound(const_cast<void*>(ptr));
    if (it == held_.begin()) return nullptr;
    --it;
    return static_cast<const char*>(ptr) < static_cast<const char*>(it->first) + it->second ? it->first : nullptr;
  }

  // With the kPinnedReuse wait switched off (negative controls), a freed
  // block goes back to the free lists at once, whatever copies still read it.
  void free(void* ctx) override {
    if (ctx != nullptr && !stream_wait_enabled(StreamWait::kPinnedReuse)) {
      auto* block = static_cast<PinnedBlock*>(ctx);
      std::lock_guard<std::mutex> lock(block->mutex_);
      block->streams_.clear();
    }
    CachingHostAllocatorImpl::free(ctx);
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }

 private:
  void allocate_host_memory(size_t size, void** ptr) override {
    current_device();  // aclrtMallocHost needs a current device; any will do
    aclError status = aclrtMallocHost(ptr, size);
    if (status != ACL_SUCCESS) {
      empty_cache();
      status = aclrtMallocHost(ptr, size);
    }
    TORCH_CHECK_WITH(OutOfMemoryError, status == ACL_SUCCESS, "flagos: allocating ", size,
                     " bytes of pinned host memory failed with ACL error ", status, ": ", recent_error_message());
    std::lock_guard<std::mutex> lock(held_mutex_);
    held_.emplace(*ptr, size);
  }

  // Called only for a block whose uses' events have completed (or that no
  // copy used): aclrtFreeHost does not wait.
  void free_block(PinnedBlock* block) override {
    {
      std::lock_guard<std::mutex> lock(held_mutex_);
      held_.erase(block->ptr_);
    }
    const aclError status = aclrtFreeHost(block->ptr_);
    if (status != ACL_SUCCESS) {
      TORCH_WARN("flagos: aclrtFreeHost failed with ACL error ", status, ": ", recent_error_message());
    }
  }

  // Runs in the deleter, which must not throw: a use whose event cannot be
  // recorded keeps its block out of the free lists for good (leaked, never
  // handed out while a copy may still read it).
  void record_stream(std::optional<std::vector<PinnedUseEvent>>& events, c10::Stream stream) override {
    try {
      PinnedUseEvent use(stream.device_index(), acquire_event(stream.device_index()));
      flagos::record_event(use.get(), stream);
      events->push_back(std::move(use));
    } catch (const std::exception& e) {
      TORCH_WARN("flagos: recording a pinned block's use failed: ", e.what());
    }
  }

  bool query_event(PinnedUseEvent& event) override { return event.complete(); }

  // Asked only while a graph capture runs, which flagos does not have.
  c10::Stream get_current_stream() const override { return current_stream(current_device()); }
  bool stream_is_capturing(c10::Stream /*stream*/) const override { return false; }

  std::mutex held_mutex_;
  std::map<void*, size_t> held_;  // every block held from the runtime: start -> size
};

void release_pinned_block(void* ctx);

struct PinnedAllocator final : public at::CachingHostAllocatorInterface<PinnedPool, release_pinned_block> {};

PinnedAllocator& pinned_pool() {
  static auto* instance = new PinnedAllocator();  // leaked: deleters may run during exit
  return *instance;
}

void release_pinned_block(void* ctx) { pinned_pool().free(ctx); }

const bool host_allocator_registered = [] {
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &pinned_pool());
  return true;
}();

}  // namespace

at::HostAllocator* pinned_allocator() { return &pinned_pool(); }

bool is_pinned(const void* ptr) { return ptr != nullptr && pinned_pool().impl_->block_start(ptr) != nullptr; }

void record_pinned_use(const void* ptr, c10::Stream stream) {
  if (void* start = pinned_pool().impl_->block_start(ptr)) {
    pinned_pool().record_event(start, nullptr, stream);
  }
}

}  // namespace flagos
