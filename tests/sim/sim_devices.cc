// The simulator's own tests: devices (count, the per-thread current device, references and resets, device info) and the per-thread error message.
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

TEST(device_count) {
  uint32_t n = 0;
  CHECK_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
  CHECK_EQ(static_cast<int>(n), expectedDevices());
  CHECK_EQ(fsimDeviceCount(), expectedDevices());
  CHECK_EQ(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetDeviceCount", "nullptr");
  CHECK_EQ(aclInit(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclInit(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclFinalize(), ACL_SUCCESS);
}

// CANN treats "no current device" as a normal state of aclrtGetDevice: 107002
// without an error message. Calls that need a device report it.
TEST(fresh_thread_has_no_current_device) {
  aclError rc = ACL_SUCCESS, syncRc = ACL_SUCCESS;
  int32_t device = -7;
  const char* getMessage = "unset";
  std::string syncMessage;
  onFreshThread([&] {
    rc = aclrtGetDevice(&device);
    getMessage = aclGetRecentErrMsg();
    syncRc = aclrtSynchronizeDevice();
    syncMessage = lastError();
  });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(device, -7);
  CHECK(getMessage == nullptr);
  CHECK_EQ(syncRc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(syncMessage.find("aclrtSynchronizeDevice") != std::string::npos);
  CHECK_EQ(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetDevice", "nullptr");
}

TEST(current_device_is_per_thread) {
  std::barrier sync(2);
  int32_t seenByThread[2] = {-1, -1};
  setDevice(1);
  std::thread other([&] {
    aclrtSetDevice(3);
    sync.arrive_and_wait();  // main checks, then switches to 2
    sync.arrive_and_wait();
    aclrtGetDevice(&seenByThread[0]);
    sync.arrive_and_wait();
    aclrtGetDevice(&seenByThread[1]);
  });
  sync.arrive_and_wait();
  int32_t device = -1;
  CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
  CHECK_EQ(device, 1);
  setDevice(2);
  sync.arrive_and_wait();
  sync.arrive_and_wait();
  other.join();
  CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
  CHECK_EQ(device, 2);
  CHECK_EQ(seenByThread[0], 3);
  CHECK_EQ(seenByThread[1], 3);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
}

TEST(set_device_rejects_bad_index) {
  const int n = expectedDevices();
  setDevice(2);
  CHECK_EQ(aclrtSetDevice(n), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("aclrtSetDevice", cat("device ", n), cat("0..", n - 1));
  CHECK_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("aclrtSetDevice", "device -1");
  int32_t device = -1;
  CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
  CHECK_EQ(device, 2);
  CHECK_EQ(aclrtResetDevice(n), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("aclrtResetDevice", cat("device ", n));
  CHECK_EQ(aclrtResetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_EQ(aclrtResetDeviceForce(n), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("aclrtResetDeviceForce", cat("device ", n));
  CHECK_EQ(aclrtResetDeviceForce(-1), ACL_ERROR_RT_INVALID_DEVICEID);
}

TEST(set_device_counts_every_call) {
  fsimResetStats();
  setDevice(0);
  setDevice(0);  // same device: still a call
  setDevice(1);
  CHECK_EQ(aclrtSetDevice(99), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_EQ(stat("set_device_calls"), 4);
  fsimResetStats();
  CHECK_EQ(stat("set_device_calls"), 0);
}

// Device references are process-wide: every aclrtSetDevice adds one, every
// aclrtResetDevice drops one, and resetting a device without references
// fails with 507007.
TEST(reset_counts_references) {
  releaseDevice(3);
  CHECK_EQ(aclrtResetDevice(3), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
  CHECK_ERR_HAS("aclrtResetDevice", "device 3", "has not been set");
  setDevice(3);
  aclError otherRc = ACL_SUCCESS;
  onFreshThread([&] { otherRc = aclrtSetDevice(3); });  // another thread's reference counts too
  CHECK_EQ(otherRc, ACL_SUCCESS);
  CHECK_EQ(aclrtResetDevice(3), ACL_SUCCESS);
  int32_t device = -1;
  CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);  // one reference left: still current
  CHECK_EQ(device, 3);
  CHECK_EQ(aclrtResetDevice(3), ACL_SUCCESS);       // the last one: torn down
  CHECK_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(aclrtResetDevice(3), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
  CHECK_ERR_HAS("aclrtResetDevice", "device 3");
}

// When a reset tears a device down, the calling thread loses its current
// device, whichever it was (as CANN does); other threads that had the torn
// down device lose it too, and its streams become stale handles.
TEST(reset_to_zero_drops_current_device) {
  releaseDevice(1);
  releaseDevice(2);
  setDevice(1);
  aclrtStream s1 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
  std::barrier sync(2);
  aclError onOne = ACL_SUCCESS, onTwo = ACL_SUCCESS;
  std::thread other([&] {
    aclrtSetDevice(1);
    aclrtResetDevice(1);  // leaves the main thread's reference
    sync.arrive_and_wait();
    sync.arrive_and_wait();  // main has torn device 1 down
    int32_t device = -1;
    onOne = aclrtGetDevice(&device);
    aclrtSetDevice(2);
    sync.arrive_and_wait();
    sync.arrive_and_wait();  // main reset device 2 once (a reference is left)
    onTwo = aclrtGetDevice(&device);
  });
  sync.arrive_and_wait();
  setDevice(2);
  CHECK_EQ(aclrtResetDevice(1), ACL_SUCCESS);  // device 1: no reference left
  int32_t device = -1;
  CHECK_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL);  // though device 2 was current
  CHECK_EQ(fsimStreamDevice(s1), -1);
  CHECK_EQ(aclrtSynchronizeStream(s1), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "not a live stream");
  sync.arrive_and_wait();
  sync.arrive_and_wait();
  // Other threads keep a device that still has references.
  CHECK_EQ(aclrtResetDevice(2), ACL_SUCCESS);
  sync.arrive_and_wait();
  other.join();
  CHECK_EQ(onOne, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(onTwo, ACL_SUCCESS);
  CHECK_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL);
  setDevice(1);  // a device set again is a new device: fresh default stream, no stale state
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

// aclrtResetDeviceForce drops every reference at once.
TEST(reset_device_force_drops_every_reference) {
  releaseDevice(2);
  CHECK_EQ(aclrtResetDeviceForce(2), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
  CHECK_ERR_HAS("aclrtResetDeviceForce", "device 2");
  setDevice(2);
  setDevice(2);
  setDevice(2);
  CHECK_EQ(aclrtResetDeviceForce(2), ACL_SUCCESS);
  int32_t device = -1;
  CHECK_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(aclrtResetDevice(2), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
  CHECK_EQ(aclrtResetDeviceForce(2), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
}

// The simulated SoC's attributes; no current device is needed.
TEST(device_info_and_soc_name) {
  int64_t cores = 0, l2 = 0, total = 0, cube = 0, vector = 0, chip = -1;
  const char* soc = nullptr;
  aclError rc[6] = {};
  onFreshThread([&] {
    rc[0] = aclrtGetDeviceInfo(1, ACL_DEV_ATTR_AICORE_CORE_NUM, &cores);
    rc[1] = aclrtGetDeviceInfo(1, ACL_DEV_ATTR_L2_CACHE_SIZE, &l2);
    rc[2] = aclrtGetDeviceInfo(1, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &total);
    rc[3] = aclrtGetDeviceInfo(1, ACL_DEV_ATTR_CUBE_CORE_NUM, &cube);
    rc[4] = aclrtGetDeviceInfo(1, ACL_DEV_ATTR_VECTOR_CORE_NUM, &vector);
    rc[5] = aclrtGetDeviceInfo(3, ACL_DEV_ATTR_PHY_CHIP_ID, &chip);
    soc = aclrtGetSocName();
  });
  for (aclError r : rc) CHECK_EQ(r, ACL_SUCCESS);
  CHECK_EQ(cores, 20);
  CHECK_EQ(cube, 20);
  CHECK_EQ(vector, 40);
  CHECK_EQ(l2, 192LL << 20);
  CHECK_EQ(total, 16LL << 30);
  CHECK_EQ(chip, 3);
  CHECK(soc != nullptr);
  CHECK_EQ(std::string(soc), "Ascend910B3");

  int64_t value = -5;
  const uint32_t n = static_cast<uint32_t>(expectedDevices());
  CHECK_EQ(aclrtGetDeviceInfo(n, ACL_DEV_ATTR_AICORE_CORE_NUM, &value), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtGetDeviceInfo", cat("device ", n));
  CHECK_EQ(aclrtGetDeviceInfo(UINT32_MAX, ACL_DEV_ATTR_AICORE_CORE_NUM, &value), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_EQ(aclrtGetDeviceInfo(0, static_cast<aclrtDevAttr>(999), &value), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtGetDeviceInfo", "attr 999");
  CHECK_EQ(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_WARP_SIZE, &value), ACL_ERROR_RT_PARAM_INVALID);  // not modelled
  CHECK_EQ(value, -5);
  CHECK_EQ(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetDeviceInfo", "nullptr");
}

// ---- error messages --------------------------------------------------------------

// aclGetRecentErrMsg: the calling thread's latest error; reading it clears it.
TEST(recent_error_message_is_per_thread_and_read_once) {
  setDevice(0);
  CHECK_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
  const char* other = "unset";
  onFreshThread([&] { other = aclGetRecentErrMsg(); });
  CHECK(other == nullptr);  // another thread's error is not this thread's
  const char* first = aclGetRecentErrMsg();
  CHECK(first != nullptr);
  CHECK_EQ(std::string(first), "aclrtFree: devPtr is nullptr");
  CHECK(aclGetRecentErrMsg() == nullptr);  // read: cleared
  CHECK_EQ(aclrtSetDevice(-3), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_EQ(aclrtMalloc(nullptr, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  const char* latest = aclGetRecentErrMsg();
  CHECK(latest != nullptr);
  CHECK_EQ(std::string(latest), "aclrtMalloc: devPtr is nullptr");  // the latest failure only
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);  // a success neither sets nor clears
  CHECK(aclGetRecentErrMsg() == nullptr);
}

}  // namespace
