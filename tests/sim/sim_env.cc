// The simulator's own tests: environment cases, run by tests/sim/test_sim_runtime.py with FLAGOS_SIM_* set.
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

#include "flagos/aclnn/aclnnCast.h"
#include "sim_harness.h"

namespace {

using namespace fsim_test;

ENV_TEST(env_invalid_devices) {
  const char* env = std::getenv("FLAGOS_SIM_DEVICES");
  CHECK(env != nullptr);
  const std::string value = env;
  CHECK_EQ(fsimDeviceCount(), -1);
  CHECK_ERR_HAS("fsimDeviceCount", "FLAGOS_SIM_DEVICES='" + value + "'", "1..16");
  uint32_t n = 0;
  CHECK_EQ(aclrtGetDeviceCount(&n), ACL_ERROR_RT_NO_DEVICE);  // as CANN with a bad ASCEND_RT_VISIBLE_DEVICES
  CHECK_ERR_HAS("aclrtGetDeviceCount", "FLAGOS_SIM_DEVICES='" + value + "'");
  std::printf("MESSAGE %s\n", lastError().c_str());
  CHECK_EQ(aclrtSetDevice(0), ACL_ERROR_RT_NO_DEVICE);
  CHECK_ERR_HAS("aclrtSetDevice", "FLAGOS_SIM_DEVICES");
  int64_t value64 = 0;
  CHECK_EQ(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &value64), ACL_ERROR_RT_NO_DEVICE);
  CHECK_ERR_HAS("aclrtGetDeviceInfo", "FLAGOS_SIM_DEVICES");
  std::printf("STATS %s\n", fsimStatsJson());
}

ENV_TEST(env_two_devices) {
  CHECK_EQ(fsimDeviceCount(), 2);
  setDevice(1);
  CHECK_EQ(aclrtSetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID);
  CHECK_ERR_HAS("device 2", "0..1");
}

// FLAGOS_SIM_DEVICE_MEMORY=1M: each device has 1 MiB.
ENV_TEST(env_small_device_memory) {
  setDevice(0);
  size_t free = 0, total = 0;
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_SUCCESS);
  CHECK_EQ(total, size_t{1} << 20);
  CHECK_EQ(free, total);
  int64_t reported = 0;
  CHECK_EQ(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &reported), ACL_SUCCESS);
  CHECK_EQ(reported, int64_t{1} << 20);
  void* a = nullptr;
  void* b = nullptr;
  CHECK_EQ(aclrtMalloc(&a, (size_t{1} << 20) - 32, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);  // all of it
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_SUCCESS);
  CHECK_EQ(free, 0u);
  CHECK_EQ(aclrtMalloc(&b, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
  CHECK_ERR_HAS("aclrtMalloc", "out of memory on device 0", "0 of 1048576 bytes free");
  std::printf("MESSAGE %s\n", lastError().c_str());
  setDevice(1);
  CHECK_EQ(aclrtMalloc(&b, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  CHECK_EQ(aclrtFree(b), ACL_SUCCESS);
  CHECK_EQ(aclrtFree(a), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtMalloc(&b, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  CHECK_EQ(aclrtFree(b), ACL_SUCCESS);
}

ENV_TEST(env_invalid_device_memory) {
  setDevice(0);
  void* p = nullptr;
  CHECK_EQ(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMalloc", "FLAGOS_SIM_DEVICE_MEMORY='");
  std::printf("MESSAGE %s\n", lastError().c_str());
  size_t free = 0, total = 0;
  CHECK_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetMemInfo", "FLAGOS_SIM_DEVICE_MEMORY='");
  int64_t value = 0;
  CHECK_EQ(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &value), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetDeviceInfo", "FLAGOS_SIM_DEVICE_MEMORY='");
  CHECK_EQ(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &value), ACL_SUCCESS);  // unaffected
}

// Reads device memory from host code: fine without protect mode, SIGSEGV with it.
ENV_TEST(host_reads_device_memory) {
  setDevice(0);
  DeviceMem p(0, sizeof(int32_t));
  int32_t value = 42;
  CHECK_EQ(aclrtMemcpy(p.get(), 4, &value, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  std::printf("runtime copy done\n");
  std::fflush(stdout);
  const int32_t read = *static_cast<volatile int32_t*>(p.get());
  std::printf("host read %d\n", read);
  CHECK_EQ(read, 42);
}

ENV_TEST(env_invalid_protect) {
  setDevice(0);
  void* p = nullptr;
  CHECK_EQ(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMalloc", "FLAGOS_SIM_PROTECT='", "must be 0 or 1");
  std::printf("MESSAGE %s\n", lastError().c_str());
}

ENV_TEST(env_mismatch_nan) {
  CHECK_EQ(fsimGetMismatchMode(), FSIM_MISMATCH_NAN);
  DevTensor self(0, {2}), other(0, {2}), out(0, {2});
  setDevice(1);
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  for (float v : out.read<float>()) CHECK(std::isnan(v));
  CHECK_EQ(stat("mismatched_launches"), 1);
  CHECK_EQ(stat("rejected_launches"), 0);
}

ENV_TEST(env_invalid_mismatch) {
  setDevice(0);
  DevTensor self(0, {2}), other(0, {2}), out(0, {2});
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR);  // even a matching launch
  CHECK_ERR_HAS("aclnnAdd", "FLAGOS_SIM_ON_MISMATCH='", "'error' or 'nan'");
  std::printf("MESSAGE %s\n", lastError().c_str());
  fsimSetMismatchMode(FSIM_MISMATCH_ERROR);  // an explicit choice overrides the variable
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
}

// FLAGOS_SIM_FAULT="aclnnAdd:2,aclnnCast:1:3"
ENV_TEST(env_faults) {
  setDevice(0);
  DevTensor self(0, {2}), other(0, {2}), out(0, {2});
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
  CHECK_EQ(lastError(), "aclnnAdd: injected fault at phase 2");
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT, out.get(), &ws, &e), ACLNN_ERR_INNER);
    CHECK_EQ(lastError(), "aclnnCast: injected fault at phase 1");
  }
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT, out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
}

ENV_TEST(env_invalid_faults) {
  setDevice(0);
  DevTensor self(0, {2}), other(0, {2}), out(0, {2});
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "FLAGOS_SIM_FAULT='", "op:phase[:count]");
  std::printf("MESSAGE %s\n", lastError().c_str());
}

// FLAGOS_SIM_STREAMS=lazy: work waits until something waits for it.
ENV_TEST(env_lazy_streams) {
  CHECK_EQ(fsimGetStreamMode(), FSIM_STREAMS_LAZY);
  setDevice(0);
  DeviceMem x(0, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, nullptr), ACL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  fsimDrainStreams();
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);
}

// An invalid FLAGOS_SIM_STREAMS fails every call that queues work.
ENV_TEST(env_invalid_streams) {
  setDevice(0);
  DeviceMem x(0, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "FLAGOS_SIM_STREAMS='");
  std::printf("MESSAGE %s\n", lastError().c_str());
  DevTensor self(0, {2}), out(0, {2});
  CHECK_EQ(add(self, self, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "FLAGOS_SIM_STREAMS='");
  fsimSetStreamMode(FSIM_STREAMS_ASYNC);  // an explicit choice overrides the variable
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(add(self, self, 1.0f, out), ACLNN_SUCCESS);
}

// Protect mode: a kernel's worker thread may touch the memory while the
// kernel runs; once it is done, host code that reads it dies with SIGSEGV.
ENV_TEST(host_reads_memory_a_kernel_wrote) {
  setDevice(0);
  DevTensor self(0, {1}), out(0, {1});
  self.write<float>({20});
  CHECK_EQ(add(self, self, 1.0f, out), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 40);
  std::printf("kernel done\n");
  std::fflush(stdout);
  const float read = *static_cast<volatile float*>(out.data());
  std::printf("host read %g\n", read);
}

// A fixed sequence whose counters test_sim_runtime.py checks in the JSON.
ENV_TEST(stats_scenario) {
  fsimResetStats();
  setDevice(0);                                                   // set_device_calls 1
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});             // 3 x 12 bytes on 0
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);           // launches 0: 1
  setDevice(1);                                                   // set_device_calls 2
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR); // rejected 1, mismatched 1
  DevTensor in1(1, {4}), out1(1, {4}, ACL_INT32);                 // 16 + 16 bytes on 1
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnCastGetWorkspaceSize(in1.get(), ACL_INT32, out1.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);              // launches 1: 1
  CHECK_EQ(aclrtDeviceEnablePeerAccess(0, 0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(in1.data(), 16, self.data(), 12, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);  // peer 1
  std::printf("STATS %s\n", fsimStatsJson());
}

}  // namespace
