// The flagos device allocator: one caching pool per device, registered with
// c10 as PrivateUse1's DeviceAllocator (storages, torch.load, deepcopy and
// torch.accelerator's memory API all go through it).
//
// Memory is always allocated on the device the caller asks for (the device
// of the DataPtr), never on the ambient current device. As in CUDA's caching
// allocator, a block belongs to the stream that was current on its device
// when it was allocated: freed, it goes back to that stream's pool at once
// (work queued later on that stream runs after the work that used it), and
// only that stream takes it again. A block that other streams used too
// (Tensor.record_stream, the allocator's recordStream) is held until events
// recorded on those streams at the free have completed. FLAGOS_ALLOC_CACHE=0
// turns the pool off: every free returns memory to the runtime, once the
// streams that used it are done (aclrtFree does not wait), which makes leak
// checks on the simulator's live-allocation counters exact.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include <optional>
#include <utility>

namespace flagos {

// The allocator registered for PrivateUse1: allocates on the current device.
c10::DeviceAllocator* device_allocator();
// An allocator bound to one device: what flagos storages keep, so that a
// storage that grows later grows on its own device.
c10::Allocator* device_allocator(c10::DeviceIndex device);

// Allocates `nbytes` on `device` whatever device is current, for the
// current stream of `device`.
c10::DataPtr allocate_on(c10::DeviceIndex device, size_t nbytes);

// Tells the allocator that work queued on `stream` uses the block of `ptr`
// (a DataPtr it handed out): when freed, the block waits for that work.
void record_stream(const c10::DataPtr& ptr, c10::Stream stream);

// The device of a pointer this allocator handed out (any address inside a
// live block), or nullopt. Used by the launch-time device sanitizer: it is
// what the allocator knows, so it works on real hardware too.
std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr);

// The statistics of one device, in c10's form (torch.flagos.memory_stats).
c10::CachingDeviceAllocator::DeviceStats device_stats(c10::DeviceIndex device);
void reset_peak_stats(c10::DeviceIndex device);
void reset_accumulated_stats(c10::DeviceIndex device);

// Returns every cached block of every device to the runtime, once the
// streams that used it are done.
void empty_cache();

// (free, total) bytes of `device`'s memory, from the runtime.
std::pair<size_t, size_t> memory_info(c10::DeviceIndex device);

}  // namespace flagos
