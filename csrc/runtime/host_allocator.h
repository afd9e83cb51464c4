// Pinned (page-locked) host memory for flagos: what tensor.pin_memory(),
// torch.empty(..., pin_memory=True) and non-blocking copies use, through
// PyTorch's PrivateUse1 hooks (getPinnedMemoryAllocator, isPinnedPtr) and
// at::getHostAllocator(PrivateUse1).
//
// ATen's caching host allocator (at::CachingHostAllocatorImpl, as CUDA's)
// does the caching, the statistics and the deferred reuse; blocks come from
// aclrtMallocHost. A block a non-blocking copy used goes back to the cache
// only once an event recorded on the copy's stream at the free has completed
// (StreamWait::kPinnedReuse), so that a new tensor cannot overwrite memory a
// queued copy has not read yet.
#pragma once

#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/Stream.h>

namespace flagos {

// The pinned host allocator (registered for PrivateUse1).
at::HostAllocator* pinned_allocator();

// Whether `ptr` lies inside a pinned block of this allocator.
bool is_pinned(const void* ptr);

// Work queued on `stream` (a non-blocking copy) uses the pinned block that
// holds `ptr`: when freed, the block waits for that work. No effect for
// memory that is not pinned.
void record_pinned_use(const void* ptr, c10::Stream stream);

}  // namespace flagos
