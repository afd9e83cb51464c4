// Streams of flagos devices, as c10::Stream values.
//
// Every device has a default stream (id 0) created on that device the first
// time it is needed, and up to kMaxStreamsPerDevice - 1 more streams made by
// new_stream(). Each thread has a current stream per device (the default
// until changed), so a kernel launched for device d takes d's current stream
// whatever device happens to be current.
#pragma once

#include <c10/core/Stream.h>

#include "flagos/acl_api.h"

namespace flagos {

constexpr int kMaxStreamsPerDevice = 64;

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream current_stream(c10::DeviceIndex device);
// Makes `stream` current for its device on this thread; returns the previous one.
c10::Stream exchange_stream(c10::Stream stream);
c10::Stream new_stream(c10::DeviceIndex device);

// The runtime handle behind a stream; created on its device on first use.
aclrtStream acl_stream(c10::Stream stream);

void synchronize_stream(c10::Stream stream);

}  // namespace flagos
