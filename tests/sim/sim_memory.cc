// The simulator's own tests: memory: device and pinned allocations, and copies and memsets checked against what their pointers are.
// (harness: sim_harness.h.)
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim_harness.h"

namespace {

using namespace fsim_test;

TEST(malloc_uses_current_device) {
  setDevice(3);
  const int64_t count = stat("live_allocations", "3"), bytes = stat("live_bytes", "3");
  void* p = nullptr;
  CHECK_EQ(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  char* c = static_cast<char*>(p);
  CHECK_EQ(fsimPointerDevice(p), 3);
  CHECK_EQ(fsimPointerDevice(c + 99), 3);
  CHECK_EQ(fsimPointerDevice(c + 100), -1);
  CHECK_EQ(fsimPointerDevice(&count), -1);
  CHECK_EQ(stat("live_allocations", "3"), count + 1);
  CHECK_EQ(stat("live_bytes", "3"), bytes + 100);
  CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
  CHECK_EQ(fsimPointerDevice(p), -1);
  CHECK_EQ(stat("live_allocations", "3"), count);
  CHECK_EQ(stat("live_bytes", "3"), bytes);
  void* q = nullptr;
  aclError rc = ACL_SUCCESS;
  std::string message;
  onFreshThread([&] {
    rc = aclrtMalloc(&q, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    message = lastError();
  });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtMalloc") != std::string::npos);
}

// Null and size 0 fail (100000); any policy is accepted (CANN maps unknown
// ones to its default); pointers are at least 64-byte aligned.
TEST(malloc_checks_arguments_and_aligns) {
  setDevice(0);
  void* p = nullptr;
  CHECK_EQ(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMalloc", "devPtr is nullptr");
  CHECK_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMalloc", "size is 0");
  for (int policy : {int{ACL_MEM_MALLOC_NORMAL_ONLY_P2P}, int{ACL_MEM_MALLOC_HUGE1G_ONLY_P2P}, 42,
                     ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_HIGH_BAND_WIDTH, -1}) {
    CHECK_EQ(aclrtMalloc(&p, 24, static_cast<aclrtMemMallocPolicy>(policy)), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
  }
  std::vector<void*> blocks;
  for (size_t size : {1, 63, 64, 100, 4097, 1 << 20}) {
    CHECK_EQ(aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    blocks.push_back(p);
  }
  for (void* b : blocks) CHECK_EQ(aclrtFree(b), ACL_SUCCESS);
}

// Each device has 16 GiB (FLAGOS_SIM_DEVICE_MEMORY); an allocation takes
// its size rounded up to 32 bytes plus 32, and beyond the free memory
// aclrtMalloc fails with 207001.
TEST(malloc_beyond_device_memory_fails) {
  setDevice(2);
  size_t free0 = 0, total = 0;
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
  CHECK_EQ(total, size_t{16} << 30);
  void* big = nullptr;
  CHECK_EQ(aclrtMalloc(&big, total, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
  CHECK_ERR_HAS("aclrtMalloc", "out of memory on device 2");
  const size_t half = size_t{8} << 30;
  CHECK_EQ(aclrtMalloc(&big, half, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);  // virtual: nothing is touched
  size_t free1 = 0;
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
  CHECK_EQ(free0 - free1, half + 32);
  void* more = nullptr;
  CHECK_EQ(aclrtMalloc(&more, free1 - 31, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
  setDevice(3);  // another device has its own memory
  CHECK_EQ(aclrtMalloc(&more, half, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  CHECK_EQ(aclrtFree(more), ACL_SUCCESS);
  CHECK_EQ(aclrtFree(big), ACL_SUCCESS);
  setDevice(2);
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
  CHECK_EQ(free1, free0);
}

// aclrtFree needs no current device and frees any device's memory; what is
// not the start of a live allocation fails (the driver decides: 107000).
TEST(free_rejects_what_malloc_did_not_return) {
  DeviceMem keep(1, 16);
  void* p = nullptr;
  setDevice(1);
  CHECK_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  char* c = static_cast<char*>(p);
  CHECK_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtFree", "nullptr");
  CHECK_EQ(aclrtFree(c + 1), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtFree", "inside");
  int local = 0;
  CHECK_EQ(aclrtFree(&local), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtFree", "not device memory");
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 32), ACL_SUCCESS);
  CHECK_EQ(aclrtFree(pinned), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtFree", "aclrtFreeHost");
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
  aclError rc = ACL_ERROR_RT_FAILURE;
  onFreshThread([&] { rc = aclrtFree(p); });
  CHECK_EQ(rc, ACL_SUCCESS);
  CHECK_EQ(aclrtFree(p), ACL_ERROR_RT_PARAM_INVALID);  // freed twice
  CHECK_ERR_HAS("aclrtFree", "freed already");
}

// Pinned host memory: host memory the runtime knows. It needs a current
// device to allocate, none to free, and aclrtFreeHost takes nothing else.
TEST(malloc_host_returns_pinned_memory) {
  setDevice(0);
  const int64_t pinnedCount = stat("live_pinned_allocations"), pinnedBytes = stat("live_pinned_bytes");
  void* h = nullptr;
  CHECK_EQ(aclrtMallocHost(nullptr, 16), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMallocHost", "nullptr");
  CHECK_EQ(aclrtMallocHost(&h, 0), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMallocHost", "size is 0");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtMallocHost(&h, 16); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(aclrtMallocHost(&h, 100), ACL_SUCCESS);
  CHECK_EQ(reinterpret_cast<uintptr_t>(h) % 64, 0u);
  CHECK_EQ(fsimPointerDevice(h), -1);  // host memory, not a device's
  CHECK_EQ(stat("live_pinned_allocations"), pinnedCount + 1);
  CHECK_EQ(stat("live_pinned_bytes"), pinnedBytes + 100);
  std::memset(h, 7, 100);  // the host may touch it, even in protect mode

  CHECK_EQ(aclrtFreeHost(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtFreeHost", "nullptr");
  CHECK_EQ(aclrtFreeHost(static_cast<char*>(h) + 8), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtFreeHost", "inside");
  DeviceMem d(0, 16);
  CHECK_EQ(aclrtFreeHost(d.get()), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtFreeHost", "device memory");
  std::vector<char> pageable(64);
  CHECK_EQ(aclrtFreeHost(pageable.data()), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtFreeHost", "not pinned host memory");
  rc = ACL_ERROR_RT_FAILURE;
  onFreshThread([&] { rc = aclrtFreeHost(h); });
  CHECK_EQ(rc, ACL_SUCCESS);
  CHECK_EQ(stat("live_pinned_allocations"), pinnedCount);
  CHECK_EQ(stat("live_pinned_bytes"), pinnedBytes);
  CHECK_EQ(aclrtFreeHost(h), ACL_ERROR_RT_PARAM_INVALID);
}

TEST(get_mem_info_reports_the_current_device) {
  setDevice(1);
  size_t free = 0, total = 0;
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_SUCCESS);
  CHECK_EQ(total, size_t{16} << 30);
  CHECK(free <= total);
  void* p = nullptr;
  CHECK_EQ(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  size_t after = 0;
  CHECK_EQ(aclrtGetMemInfo(ACL_MEM_P2P_HUGE1G, &after, &total), ACL_SUCCESS);  // attr 17: the last one
  CHECK_EQ(free - after, size_t{1024 + 32});
  CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
  CHECK_EQ(aclrtGetMemInfo(static_cast<aclrtMemAttr>(18), &free, &total), ACL_ERROR_RT_INVALID_MEMORY_TYPE);
  CHECK_ERR_HAS("aclrtGetMemInfo", "attr 18");
  CHECK_EQ(aclrtGetMemInfo(static_cast<aclrtMemAttr>(-1), &free, &total), ACL_ERROR_RT_INVALID_MEMORY_TYPE);
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &total), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetMemInfo", "free is nullptr");
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, nullptr), ACL_ERROR_INVALID_PARAM);
  aclError rc = ACL_SUCCESS;
  std::string message;
  onFreshThread([&] {
    rc = aclrtGetMemInfo(ACL_HBM_MEM, &free, &total);
    message = lastError();
  });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtGetMemInfo") != std::string::npos);
}

// count 0 succeeds before any other check, even with null pointers, a bad
// kind and no current device.
TEST(zero_byte_copies_and_memsets_succeed_first) {
  aclError rc[4] = {ACL_ERROR_RT_FAILURE, ACL_ERROR_RT_FAILURE, ACL_ERROR_RT_FAILURE, ACL_ERROR_RT_FAILURE};
  int dead = 0;
  onFreshThread([&] {
    rc[0] = aclrtMemcpy(nullptr, 0, nullptr, 0, static_cast<aclrtMemcpyKind>(99));
    rc[1] = aclrtMemcpyAsync(nullptr, 0, nullptr, 0, static_cast<aclrtMemcpyKind>(99), &dead);
    rc[2] = aclrtMemset(nullptr, 0, 0, 0);
    rc[3] = aclrtMemcpy(nullptr, 0, nullptr, 0, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE);
  });
  for (aclError r : rc) CHECK_EQ(r, ACL_SUCCESS);
}

TEST(memcpy_checks_kinds) {
  setDevice(0);
  DeviceMem a(0, 16), b(0, 16);
  std::vector<int32_t> in = {1, 2, 3, 4}, out(4, 0), host(4, 0);
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, b.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_VALUES(out, 1, 2, 3, 4);
  CHECK_EQ(aclrtMemcpy(host.data(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
  CHECK_VALUES(host, 1, 2, 3, 4);
  std::vector<int32_t> staged = {9, 8, 7, 6};
  CHECK_EQ(aclrtMemcpy(a.get(), 16, staged.data(), 16, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_VALUES(out, 9, 8, 7, 6);

  // The sync copy keeps the kind strict (CANN: the driver decides; 107000 here).
  CHECK_EQ(aclrtMemcpy(host.data(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpy", "ACL_MEMCPY_HOST_TO_DEVICE", "dst", "pageable host memory");
  CHECK_EQ(aclrtMemcpy(out.data(), 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("ACL_MEMCPY_DEVICE_TO_HOST", "src");
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtMemcpy(host.data(), 16, a.get(), 16, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("ACL_MEMCPY_HOST_TO_HOST", "device memory (device 0)");
  CHECK_EQ(aclrtMemcpy(host.data(), 16, a.get(), 16, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);

  // Kinds CANN's ACL layer does not translate.
  for (int kind : {6, 7, 8, 99, -1}) {
    CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, static_cast<aclrtMemcpyKind>(kind)), ACL_ERROR_INVALID_PARAM);
    CHECK_ERR_HAS("aclrtMemcpy", cat("kind ", kind));
    CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, static_cast<aclrtMemcpyKind>(kind), nullptr),
             ACL_ERROR_INVALID_PARAM);
    CHECK_ERR_HAS("aclrtMemcpyAsync", cat("kind ", kind));
  }
  CHECK_EQ(aclrtMemcpy(nullptr, 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemcpy", "dst is nullptr");
  CHECK_EQ(aclrtMemcpy(a.get(), 16, nullptr, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemcpy", "src is nullptr");
  CHECK_EQ(aclrtMemcpyAsync(nullptr, 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "dst is nullptr");
}

// ACL_MEMCPY_DEFAULT: the direction follows from the pointers.
TEST(memcpy_default_infers_direction) {
  setDevice(1);
  DeviceMem a(1, 16), b(1, 16);
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  std::vector<int32_t> in = {4, 3, 2, 1}, out(4, 0), host(4, 0);
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(pinned, 16, b.get(), 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, pinned, 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
  CHECK_VALUES(out, 4, 3, 2, 1);
  CHECK_EQ(aclrtMemcpy(host.data(), 16, out.data(), 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
  CHECK_VALUES(host, 4, 3, 2, 1);
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEFAULT, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(b.get(), 16, pinned, 16, ACL_MEMCPY_DEFAULT, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
}

// Pinned host memory is host memory for the sync copy's strict kind check.
TEST(memcpy_treats_pinned_memory_as_host) {
  setDevice(0);
  DeviceMem a(0, 16);
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  std::vector<int32_t> in = {5, 5, 6, 6}, out(4, 0);
  std::memcpy(pinned, in.data(), 16);
  CHECK_EQ(aclrtMemcpy(a.get(), 16, pinned, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_VALUES(out, 5, 5, 6, 6);
  CHECK_EQ(aclrtMemcpy(a.get(), 16, pinned, 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpy", "src", "pinned host memory");
  CHECK_EQ(aclrtMemcpy(static_cast<char*>(pinned) + 8, 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST),
           ACL_ERROR_RT_PARAM_INVALID);  // overruns the pinned block
  CHECK_ERR_HAS("aclrtMemcpy", "overrun");
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
}

// count > destMax is checked before the current device (107000); the
// simulator keeps checking that each side stays inside its allocation.
TEST(memcpy_checks_bounds) {
  setDevice(0);
  DeviceMem a(0, 64);
  std::vector<char> host(128, 1);
  char* p = static_cast<char*>(a.get());
  CHECK_EQ(aclrtMemcpy(p, 64, host.data(), 65, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpy", "count 65", "destMax 64");
  CHECK_EQ(aclrtMemcpyAsync(p, 64, host.data(), 65, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "count 65", "destMax 64");
  aclError rc[2] = {};
  onFreshThread([&] {
    rc[0] = aclrtMemcpy(p, 64, host.data(), 65, ACL_MEMCPY_HOST_TO_DEVICE);
    rc[1] = aclrtMemcpyAsync(p, 64, host.data(), 65, ACL_MEMCPY_HOST_TO_DEVICE, nullptr);
  });
  CHECK_EQ(rc[0], ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(rc[1], ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtMemcpy(p, 128, host.data(), 80, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpy", "overrun");
  CHECK_EQ(aclrtMemcpy(p + 60, 8, host.data(), 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtMemcpy(host.data(), 128, p + 60, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtMemcpyAsync(host.data(), 128, p + 60, 8, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
           ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "overrun");
  CHECK_EQ(aclrtMemcpy(p + 56, 8, host.data(), 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(host.data(), 128, p + 56, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
}

// dst == src: nothing to do, before the kind is compared with the pointers
// and before the current device is checked.
TEST(memcpy_to_itself_does_nothing) {
  setDevice(0);
  DeviceMem a(0, 16);
  std::vector<char> host(16, 3);
  CHECK_EQ(aclrtMemcpy(host.data(), 16, host.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(a.get(), 16, a.get(), 16, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  aclError rc = ACL_ERROR_RT_FAILURE;
  onFreshThread([&] { rc = aclrtMemcpy(a.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE); });
  CHECK_EQ(rc, ACL_SUCCESS);
}

TEST(memcpy_needs_current_device) {
  DeviceMem a(0, 16);
  std::vector<int32_t> in = {1, 2, 3, 4};
  aclError rc[2] = {};
  std::string message;
  onFreshThread([&] {
    rc[0] = aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE);
    message = lastError();
    rc[1] = aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr);
  });
  CHECK_EQ(rc[0], ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtMemcpy") != std::string::npos);
  CHECK_EQ(rc[1], ACL_ERROR_RT_CONTEXT_NULL);
}

// A device-to-device copy between two devices needs peer access (CANN: the
// driver decides; 107000 here).
TEST(memcpy_across_devices_needs_peer_access) {
  DeviceMem a(0, 16), b(1, 16);
  std::vector<int32_t> in = {5, 6, 7, 8}, out(4, 0);
  setDevice(0);
  // Peer access is process-wide and another case may have enabled the pair.
  if (aclrtDeviceDisablePeerAccess(1) != ACL_SUCCESS) lastError();
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpy", "from device 0 to device 1", "peer access");

  fsimResetStats();
  CHECK_EQ(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, b.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_VALUES(out, 5, 6, 7, 8);
  setDevice(3);  // the pair is enabled whatever device is current, in either direction
  CHECK_EQ(aclrtMemcpy(a.get(), 16, b.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(stat("peer_copies"), 2);

  setDevice(1);  // either side may disable
  CHECK_EQ(aclrtDeviceDisablePeerAccess(0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtDeviceDisablePeerAccess", "not enabled");
  CHECK_EQ(stat("peer_copies"), 2);
}

TEST(peer_access_checks_arguments) {
  setDevice(0);
  int32_t can = -1;
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_SUCCESS);
  CHECK_EQ(can, 1);
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, 1, 1), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtDeviceCanAccessPeer", "both 1");
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, 0, 99), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("aclrtDeviceCanAccessPeer", "device 99");
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, -2, 0), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_EQ(aclrtDeviceCanAccessPeer(nullptr, 0, 1), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtDeviceCanAccessPeer", "canAccessPeer is nullptr");

  CHECK_EQ(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_FEATURE_UNSUPPORTED);
  CHECK_ERR_HAS("aclrtDeviceEnablePeerAccess", "flags");
  CHECK_EQ(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM);  // peer == current
  CHECK_ERR_HAS("aclrtDeviceEnablePeerAccess", "current device");
  CHECK_EQ(aclrtDeviceEnablePeerAccess(99, 0), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("aclrtDeviceEnablePeerAccess", "device 99");
  CHECK_EQ(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtDeviceDisablePeerAccess", "current device");
  CHECK_EQ(aclrtDeviceDisablePeerAccess(99), ACL_ERROR_RT_INVALID_DEVICEID);
  aclError rc[3] = {};
  onFreshThread([&] {
    rc[0] = aclrtDeviceEnablePeerAccess(1, 7);  // the flags are checked first
    rc[1] = aclrtDeviceEnablePeerAccess(1, 0);
    rc[2] = aclrtDeviceDisablePeerAccess(1);
  });
  CHECK_EQ(rc[0], ACL_ERROR_FEATURE_UNSUPPORTED);
  CHECK_EQ(rc[1], ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(rc[2], ACL_ERROR_RT_CONTEXT_NULL);
}

// An async copy goes on a stream of the current device (107003 otherwise);
// a destroyed stream is a stale handle (107017).
TEST(memcpy_async_needs_a_stream_of_the_current_device) {
  setDevice(2);
  aclrtStream s2 = nullptr, s0 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtCreateStream(&s0), ACL_SUCCESS);
  DeviceMem a(0, 16), c(2, 16);
  std::vector<int32_t> in = {1, 2, 3, 4}, out(4, 0);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s2), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "belongs to device 2", "current device is 0");
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_VALUES(out, 1, 2, 3, 4);
  // A stream of the current device copying another device's memory (the
  // driver decides; 107000 here).
  CHECK_EQ(aclrtMemcpyAsync(c.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s0), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "stream belongs to device 0", "dst on device 2");
  CHECK_EQ(aclrtDestroyStream(s0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s0), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "not a live stream");
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
}

// With device or pinned memory on both sides the async copy corrects the
// kind silently; with pageable host memory on a side the kind must fit.
TEST(memcpy_async_corrects_kinds_of_known_memory) {
  setDevice(1);
  DeviceMem a(1, 16), b(1, 16);
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  std::vector<int32_t> in = {3, 1, 4, 1}, out(4, 0);
  std::memcpy(pinned, in.data(), 16);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, pinned, 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(b.get(), 16, a.get(), 16, ACL_MEMCPY_HOST_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);  // the copy from `pinned` has run
  std::memset(pinned, 0, 16);
  CHECK_EQ(aclrtMemcpyAsync(pinned, 16, b.get(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  std::memcpy(out.data(), pinned, 16);
  CHECK_VALUES(out, 3, 1, 4, 1);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
}

TEST(memcpy_async_checks_kinds_of_pageable_memory) {
  setDevice(1);
  DeviceMem a(1, 16);
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  std::vector<int32_t> in = {2, 7, 1, 8}, out(4, 0), other(4, 0);
  // pageable -> device: HOST_TO_DEVICE or DEVICE_TO_DEVICE (or DEFAULT).
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
           ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "ACL_MEMCPY_DEVICE_TO_HOST", "pageable host memory");
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_HOST, nullptr),
           ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, nullptr), ACL_SUCCESS);
  // device -> pageable: DEVICE_TO_HOST or DEVICE_TO_DEVICE.
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, a.get(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
           ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "ACL_MEMCPY_HOST_TO_DEVICE");
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_VALUES(out, 2, 7, 1, 8);
  // pinned -> pageable: HOST_TO_HOST or HOST_TO_DEVICE; pageable -> pinned:
  // HOST_TO_HOST or DEVICE_TO_HOST.
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, pinned, 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
           ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtMemcpyAsync(pinned, 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
           ACL_ERROR_RT_PARAM_INVALID);
  // Host to host, whatever the kind, cannot be asynchronous (207000).
  CHECK_EQ(aclrtMemcpyAsync(other.data(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_HOST, nullptr),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "host-to-host");
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, pinned, 16, ACL_MEMCPY_DEFAULT, nullptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_EQ(aclrtMemcpyAsync(pinned, 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
}

// count 0 succeeds first; then null (100000), no device (107002), count
// beyond maxCount and overruns (107000: the driver decides). Device memory
// and pinned host memory can be set; pageable host memory cannot.
TEST(memset_fills_device_memory) {
  DeviceMem a(1, 16);
  setDevice(1);
  CHECK_EQ(aclrtMemset(a.get(), 16, 0xAB, 16), ACL_SUCCESS);
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 0xAB)));
  CHECK_EQ(aclrtMemset(a.get(), 8, 0, 16), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemset", "count 16", "maxCount 8");
  CHECK_EQ(aclrtMemset(static_cast<char*>(a.get()) + 8, 16, 0, 16), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemset", "overrun");
  CHECK_EQ(aclrtMemset(out.data(), 16, 0, 16), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemset", "pageable host memory");
  CHECK_EQ(aclrtMemset(nullptr, 16, 0, 16), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemset", "nullptr");
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  CHECK_EQ(aclrtMemset(pinned, 16, 0x5A, 16), ACL_SUCCESS);
  CHECK_EQ(static_cast<uint8_t*>(pinned)[15], 0x5A);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtMemset(a.get(), 16, 0, 16); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
}

}  // namespace
