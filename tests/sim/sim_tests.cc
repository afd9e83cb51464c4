// The simulator's own tests, run by tests/sim/test_sim_runtime.py.
//
//   flagos_sim_tests           run every default case (needs >= 4 devices)
//   flagos_sim_tests NAME...   run the named cases, environment cases included
//   flagos_sim_tests --list    list the cases ("env" marks environment cases)
//
// Environment cases expect a setting (FLAGOS_SIM_*) that the pytest side
// provides. Exit status 0 when every selected case passes.
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

#include "flagos/aclnn/aclnnAdd.h"
#include "flagos/aclnn/aclnnAdds.h"
#include "flagos/aclnn/aclnnCast.h"
#include "flagos/aclnn/aclnnConstantPadNd.h"
#include "flagos/aclnn/aclnnConvolution.h"
#include "flagos/aclnn/aclnnInplaceAdd.h"
#include "flagos/aclnn/aclnnInplaceCopy.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnInplaceZero.h"
#include "flagos/aclnn/aclnnMaskedSelect.h"
#include "flagos/aclnn/aclnnReflectionPad1d.h"
#include "flagos/aclnn/aclnnReplicationPad1d.h"
#include "flagos/aclnn/aclnnReplicationPad2dBackward.h"
#include "flagos/aclnn/aclnnUpsampleBilinear2d.h"
#include "flagos/aclnn/aclnnUpsampleNearest2d.h"
#include "flagos/aclnn/aclnnUpsampleNearest2dV2.h"
#include "flagos/aclnn/aclnnUpsampleNearestExact2d.h"
#include "flagos_sim.h"

namespace {

// ---- mini framework ---------------------------------------------------------

struct Failure {
  std::string what;
};

struct Case {
  const char* name;
  void (*fn)();
  bool env;
};

std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

struct Register {
  Register(const char* name, void (*fn)(), bool env) { cases().push_back({name, fn, env}); }
};

#define CASE(name, env)                          \
  void name();                                   \
  const Register register_##name(#name, name, env); \
  void name()
#define TEST(name) CASE(name, false)
#define ENV_TEST(name) CASE(name, true)

template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}

// The calling thread's latest error message. aclGetRecentErrMsg() clears
// what it returns (and returns nullptr when there is nothing new), so the
// cases read messages through this, which keeps the last one it saw.
const std::string& lastError() {
  thread_local std::string last;
  if (const char* message = aclGetRecentErrMsg()) last = message;
  return last;
}

[[noreturn]] void failAt(const char* file, int line, const std::string& what) {
  throw Failure{cat(file, ":", line, ": ", what, "\n    last error message: '", lastError(), "'")};
}

#define CHECK(cond) \
  do {              \
    if (!(cond)) failAt(__FILE__, __LINE__, "CHECK(" #cond ") failed"); \
  } while (0)

#define CHECK_EQ(a, b)                                                                          \
  do {                                                                                          \
    const auto va_ = (a);                                                                       \
    const auto vb_ = (b);                                                                       \
    if (!(va_ == vb_)) failAt(__FILE__, __LINE__, cat("CHECK_EQ(" #a ", " #b "): ", va_, " != ", vb_)); \
  } while (0)

// The calling thread's last error message contains every given piece.
#define CHECK_ERR_HAS(...)                                                                    \
  do {                                                                                        \
    const std::string& msg_ = lastError();                                                    \
    for (const std::string& piece : std::initializer_list<std::string>{__VA_ARGS__})           \
      if (msg_.find(piece) == std::string::npos)                                              \
        failAt(__FILE__, __LINE__, cat("error message lacks '", piece, "'"));                 \
  } while (0)

// ---- helpers ------------------------------------------------------------------

int expectedDevices() {
  const char* env = std::getenv("FLAGOS_SIM_DEVICES");
  return env ? std::atoi(env) : 4;
}

void setDevice(int device) { CHECK_EQ(aclrtSetDevice(device), ACL_SUCCESS); }

// Drops every reference on `device` (references are process-wide), so that a
// case starts from a device nobody set. The calling thread then has no
// current device.
void releaseDevice(int device) {
  const aclError rc = aclrtResetDeviceForce(device);
  CHECK(rc == ACL_SUCCESS || rc == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
  lastError();  // consumes the message of a device that had no reference
}

// A number from fsimStatsJson(): top-level `key`, or `key` -> `sub`.
int64_t stat(const std::string& key, const std::string& sub = "") {
  std::string json = fsimStatsJson();
  size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) failAt(__FILE__, __LINE__, "no key " + key + " in " + json);
  at += key.size() + 4;
  if (!sub.empty()) {
    size_t end = json.find('}', at);
    at = json.find("\"" + sub + "\": ", at);
    if (at == std::string::npos || at > end) return 0;  // absent entry of a map (op_launches)
    at += sub.size() + 4;
  }
  return std::strtoll(json.c_str() + at, nullptr, 10);
}

// Device memory on `device`; the calling thread's current device is kept
// (and aclrtSetDevice is not called when `device` is already current).
class DeviceMem {
 public:
  DeviceMem(int device, size_t bytes) : bytes_(bytes) {
    int32_t previous = -1;
    bool hadDevice = aclrtGetDevice(&previous) == ACL_SUCCESS;
    if (previous != device) setDevice(device);
    CHECK_EQ(aclrtMalloc(&ptr_, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    if (hadDevice && previous != device) setDevice(previous);
  }
  ~DeviceMem() { aclrtFree(ptr_); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_;
};

size_t elementSize(aclDataType dtype) {
  switch (dtype) {
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: return 2;
    case ACL_FLOAT: case ACL_INT32: return 4;
    default: return 8;
  }
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// A contiguous device tensor with its own allocation.
class DevTensor {
 public:
  DevTensor(int device, std::vector<int64_t> dims, aclDataType dtype = ACL_FLOAT, size_t extraElements = 0)
      : dims_(std::move(dims)), dtype_(dtype), mem_(device, (numel() + extraElements) * elementSize(dtype)) {
    tensor_ = view(dims_, contiguousStrides(dims_), 0);
  }
  ~DevTensor() { aclDestroyTensor(tensor_); }
  DevTensor(const DevTensor&) = delete;
  DevTensor& operator=(const DevTensor&) = delete;

  size_t numel() const {
    size_t n = 1;
    for (int64_t d : dims_) n *= static_cast<size_t>(d);
    return n;
  }
  aclTensor* get() const { return tensor_; }
  void* data() const { return mem_.get(); }
  // Another aclTensor over the same storage (the caller destroys it).
  aclTensor* view(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset) const {
    int64_t storage = static_cast<int64_t>(mem_.bytes() / elementSize(dtype_));
    return aclCreateTensor(dims.data(), dims.size(), dtype_, strides.data(), offset, ACL_FORMAT_ND, &storage, 1,
                           mem_.get());
  }
  template <class T>
  void write(const std::vector<T>& values) const {
    CHECK_EQ(aclrtMemcpy(mem_.get(), mem_.bytes(), values.data(), values.size() * sizeof(T),
                         ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  }
  template <class T>
  std::vector<T> read() const {
    std::vector<T> values(mem_.bytes() / sizeof(T));
    CHECK_EQ(aclrtMemcpy(values.data(), mem_.bytes(), mem_.get(), mem_.bytes(), ACL_MEMCPY_DEVICE_TO_HOST),
             ACL_SUCCESS);
    return values;
  }

 private:
  std::vector<int64_t> dims_;
  aclDataType dtype_;
  DeviceMem mem_;
  aclTensor* tensor_ = nullptr;
};

using ScalarPtr = std::unique_ptr<aclScalar, decltype(&aclDestroyScalar)>;
ScalarPtr floatScalar(float value) { return {aclCreateScalar(&value, ACL_FLOAT), &aclDestroyScalar}; }

using Phase2 = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);

// Phase 2 with a fresh workspace on `workspaceDevice` (-1: the current
// device), then a synchronization of the stream, so that the kernel has run
// (and the workspace may be freed) when this returns: the phase-2 status if
// the launch failed, else the synchronization's (a kernel that failed when it
// ran: ACL_ERROR_RT_AICORE_EXCEPTION). The async cases below call phase 2
// themselves.
int32_t launch(Phase2 phase2, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream = nullptr,
               int workspaceDevice = -1) {
  if (workspaceDevice < 0) CHECK_EQ(aclrtGetDevice(&workspaceDevice), ACL_SUCCESS);
  DeviceMem workspace(workspaceDevice, workspaceSize);
  const aclnnStatus status = phase2(workspace.get(), workspaceSize, executor, stream);
  if (status != ACLNN_SUCCESS) return status;
  return aclrtSynchronizeStream(stream);
}

// aclnnAdd(self, other, alpha, out) on the current device, synchronized.
int32_t add(const DevTensor& self, const DevTensor& other, const aclScalar* alpha, const DevTensor& out,
            aclrtStream stream = nullptr, int workspaceDevice = -1) {
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), alpha, out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK(ws > 0);
  return launch(aclnnAdd, ws, e, stream, workspaceDevice);
}
int32_t add(const DevTensor& self, const DevTensor& other, float alpha, const DevTensor& out,
            aclrtStream stream = nullptr, int workspaceDevice = -1) {
  return add(self, other, floatScalar(alpha).get(), out, stream, workspaceDevice);
}

template <class T>
std::string str(const std::vector<T>& v) {
  std::string s = "[";
  for (const T& x : v) s += cat(s.size() > 1 ? ", " : "", +x);
  return s + "]";
}
#define CHECK_VALUES(actual, ...) CHECK_EQ(str(actual), str(decltype(actual){__VA_ARGS__}))

// Runs `fn` on a new thread that never called aclrtSetDevice.
void onFreshThread(const std::function<void()>& fn) { std::thread(fn).join(); }

// Restores the error mismatch mode when a case ends, even by failure.
struct NanMode {
  NanMode() { fsimSetMismatchMode(FSIM_MISMATCH_NAN); }
  ~NanMode() { fsimSetMismatchMode(FSIM_MISMATCH_ERROR); }
};

// ---- devices ------------------------------------------------------------------

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

// ---- streams and events -------------------------------------------------------

TEST(stream_belongs_to_creating_device) {
  setDevice(2);
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  CHECK_EQ(fsimStreamDevice(s), 2);
  setDevice(0);
  CHECK_EQ(fsimStreamDevice(s), 2);
  CHECK_EQ(fsimStreamDevice(nullptr), 0);  // the current device's default stream
  CHECK_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtCreateStream", "nullptr");
  aclError rc = ACL_SUCCESS;
  std::string message;
  onFreshThread([&] {
    rc = aclrtCreateStream(&s);
    message = lastError();
  });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtCreateStream") != std::string::npos);
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// Only a stream of the current device can be destroyed; a destroyed handle
// is stale (107017).
TEST(destroy_stream_checks_handle_and_device) {
  setDevice(2);
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtDestroyStream", "default stream");
  setDevice(0);
  CHECK_EQ(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtDestroyStream", "belongs to device 2", "current device is 0");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtDestroyStream(s); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(fsimStreamDevice(s), 2);  // still alive
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtDestroyStream", "not a live stream");
  CHECK_EQ(fsimStreamDevice(s), -1);
  int notAStream = 0;
  CHECK_EQ(aclrtDestroyStream(&notAStream), ACL_ERROR_RT_INVALID_HANDLE);
}

// Synchronizing works on any device's stream (CANN switches devices for the
// wait), but the calling thread needs a current device.
TEST(synchronize_stream_of_any_device) {
  setDevice(2);
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  aclError rcDefault = ACL_SUCCESS, rcExplicit = ACL_SUCCESS;
  std::string message;
  onFreshThread([&] {
    rcDefault = aclrtSynchronizeStream(nullptr);
    message = lastError();
    rcExplicit = aclrtSynchronizeStream(s);
  });
  CHECK_EQ(rcDefault, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtSynchronizeStream") != std::string::npos);
  CHECK_EQ(rcExplicit, ACL_ERROR_RT_CONTEXT_NULL);
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "not a live stream");
}

// An event is recorded on a stream of the current device (107003 otherwise);
// the event's own device is not compared with the stream's. Any stream of the
// current device may wait for an event of any device.
TEST(events_validate_handles_and_devices) {
  setDevice(1);
  aclrtStream s1 = nullptr, s2 = nullptr;
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s1), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  setDevice(2);
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s1), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtRecordEvent", "belongs to device 1", "current device is 2");
  CHECK_EQ(aclrtStreamWaitEvent(s1, e), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "belongs to device 1");
  CHECK_EQ(aclrtStreamWaitEvent(s2, e), ACL_SUCCESS);  // waiting crosses devices
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, e), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s2), ACL_SUCCESS);  // an event of device 1 on device 2's stream
  CHECK_EQ(aclrtRecordEvent(nullptr, s2), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtRecordEvent", "nullptr");
  CHECK_EQ(aclrtStreamWaitEvent(s2, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtCreateEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtRecordEvent(e, nullptr); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  aclrtEvent lost = nullptr;
  onFreshThread([&] { rc = aclrtCreateEvent(&lost); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);

  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtDestroyEvent", "not a live event");
  CHECK_EQ(aclrtDestroyEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "not a live event");
  CHECK_EQ(aclrtStreamWaitEvent(s2, e), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_EQ(aclrtRecordEvent(e, s2), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtRecordEvent", "not a live event");
  aclrtEvent fresh = nullptr;
  CHECK_EQ(aclrtCreateEvent(&fresh), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(fresh, s2), ACL_ERROR_RT_INVALID_HANDLE);  // a stale stream
  CHECK_ERR_HAS("aclrtRecordEvent", "not a live stream");
  CHECK_EQ(aclrtStreamWaitEvent(s2, fresh), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_EQ(aclrtDestroyEvent(fresh), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
}

TEST(create_event_with_flag_checks_flags) {
  setDevice(0);
  aclrtEvent e = nullptr;
  for (uint32_t bad : {0u, ACL_EVENT_IPC, 0x80u, 0x41u, ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_SYNC,
                       ACL_EVENT_EXTERNAL | ACL_EVENT_TIME_LINE}) {
    CHECK_EQ(aclrtCreateEventWithFlag(&e, bad), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ERR_HAS("aclrtCreateEventWithFlag", cat("flag ", bad));
  }
  for (uint32_t good : {ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE,
                        ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4u, 0xFu, ACL_EVENT_DEVICE_USE_ONLY,
                        ACL_EVENT_EXTERNAL}) {
    CHECK_EQ(aclrtCreateEventWithFlag(&e, good), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  }
  CHECK_EQ(aclrtCreateEventWithFlag(nullptr, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtCreateEventWithFlag", "nullptr");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
}

// Which events a stream can wait for: a recorded one; a never-recorded one
// only with ACL_EVENT_SYNC (aclrtCreateEvent's events have none: 107000);
// never a timeline-only one (207000) or a device-only one (107000).
TEST(stream_wait_event_needs_a_waitable_recorded_event) {
  setDevice(0);
  aclrtEvent plain = nullptr, sync = nullptr, timeline = nullptr, deviceOnly = nullptr;
  CHECK_EQ(aclrtCreateEvent(&plain), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&sync, ACL_EVENT_SYNC), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&timeline, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&deviceOnly, ACL_EVENT_DEVICE_USE_ONLY), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, plain), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "never been recorded");
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, sync), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(plain, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, plain), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(timeline, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, timeline), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "cannot be waited for");
  CHECK_EQ(aclrtRecordEvent(deviceOnly, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtRecordEvent", "ACL_EVENT_DEVICE_USE_ONLY");
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, deviceOnly), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "ACL_EVENT_DEVICE_USE_ONLY");
  for (aclrtEvent e : {plain, sync, timeline, deviceOnly}) CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// A never-recorded event is complete; a recorded one once its stream has got
// there (see record_completes_when_the_stream_gets_there for NOT_READY).
TEST(query_event_reports_completion) {
  setDevice(1);
  aclrtEvent e = nullptr, external = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  status = ACL_EVENT_STATUS_RESERVED;
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  aclError rc = ACL_ERROR_RT_FAILURE;
  onFreshThread([&] { rc = aclrtQueryEvent(e, &status); });  // needs no current device
  CHECK_EQ(rc, ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(e, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtQueryEvent", "status is nullptr");
  CHECK_EQ(aclrtQueryEvent(nullptr, &status), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(external, &status), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtQueryEvent", "ACL_EVENT_EXTERNAL");
  CHECK_EQ(aclrtDestroyEvent(external), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtQueryEvent", "not a live event");
}

// Milliseconds between the completion of two recorded events; an event that
// was never recorded has no time (507000).
TEST(event_elapsed_time_in_milliseconds) {
  setDevice(0);
  aclrtEvent start = nullptr, end = nullptr;
  CHECK_EQ(aclrtCreateEvent(&start), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEvent(&end), ACL_SUCCESS);
  float ms = -1;
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_INTERNAL_ERROR);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "startEvent", "never been recorded");
  CHECK_EQ(aclrtRecordEvent(start, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_INTERNAL_ERROR);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "endEvent", "never been recorded");
  // A record's timestamp is taken when the stream's worker reaches it. Waiting
  // for `start` before sleeping makes the 30 ms a lower bound whatever the
  // workers' scheduling (no upper bound: a loaded machine may stall).
  CHECK_EQ(aclrtSynchronizeEvent(start), ACL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK_EQ(aclrtRecordEvent(end, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
  CHECK(ms >= 29.0f);
  float back = 1;
  CHECK_EQ(aclrtEventElapsedTime(&back, end, start), ACL_SUCCESS);  // no reversal check, as in CANN
  CHECK(back <= -29.0f);
  CHECK_EQ(aclrtEventElapsedTime(nullptr, start, end), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "ms is nullptr");
  CHECK_EQ(aclrtEventElapsedTime(&ms, nullptr, end), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_EQ(aclrtDestroyEvent(start), ACL_SUCCESS);
}

// An event can be synchronized from any thread, with any current device or
// none; a never-recorded event returns at once.
TEST(synchronize_event_needs_no_current_device) {
  setDevice(1);
  aclrtEvent recorded = nullptr, unrecorded = nullptr, external = nullptr;
  CHECK_EQ(aclrtCreateEvent(&recorded), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEvent(&unrecorded), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(recorded, nullptr), ACL_SUCCESS);
  aclError rc[2] = {ACL_ERROR_RT_FAILURE, ACL_ERROR_RT_FAILURE};
  onFreshThread([&] {
    rc[0] = aclrtSynchronizeEvent(recorded);
    rc[1] = aclrtSynchronizeEvent(unrecorded);
  });
  CHECK_EQ(rc[0], ACL_SUCCESS);
  CHECK_EQ(rc[1], ACL_SUCCESS);
  setDevice(3);
  CHECK_EQ(aclrtSynchronizeEvent(recorded), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "nullptr");
  CHECK_EQ(aclrtSynchronizeEvent(external), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "ACL_EVENT_EXTERNAL");
  for (aclrtEvent e : {recorded, unrecorded, external}) CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// ---- memory -----------------------------------------------------------------------

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

// ---- operator arguments ---------------------------------------------------------

TEST(arguments_are_created_and_destroyed) {
  const int64_t live = stat("live_arguments");
  int64_t dims[] = {2, 3}, strides[] = {3, 1};
  float f = 1.5f;
  int64_t ints[] = {1, 2, 3};
  float floats[] = {0.5f};
  bool bools[] = {true, false};
  aclTensor* t1 = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* t2 = aclCreateTensor(dims, 2, ACL_INT32, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* t3 = aclCreateTensor(dims, 2, ACL_BF16, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclScalar* s1 = aclCreateScalar(&f, ACL_FLOAT);
  aclScalar* s2 = aclCreateScalar(&f, ACL_FLOAT);
  aclScalar* s3 = aclCreateScalar(&f, ACL_FLOAT);
  aclIntArray* ia = aclCreateIntArray(ints, 3);
  aclFloatArray* fa = aclCreateFloatArray(floats, 1);
  aclBoolArray* ba = aclCreateBoolArray(bools, 2);
  CHECK(t1 && t2 && t3 && s1 && s2 && s3 && ia && fa && ba);
  const aclTensor* tensors[] = {t2, t3};
  const aclScalar* scalars[] = {s2, s3};
  aclTensorList* tl = aclCreateTensorList(tensors, 2);
  aclScalarList* sl = aclCreateScalarList(scalars, 2);
  CHECK(tl && sl);
  CHECK_EQ(stat("live_arguments"), live + 11);
  CHECK_EQ(aclDestroyTensorList(tl), ACLNN_SUCCESS);  // destroys t2 and t3 too
  CHECK_EQ(aclDestroyScalarList(sl), ACLNN_SUCCESS);  // destroys s2 and s3 too
  CHECK_EQ(stat("live_arguments"), live + 5);
  aclDestroyTensor(t1);
  aclDestroyScalar(s1);
  aclDestroyIntArray(ia);
  aclDestroyFloatArray(fa);
  aclDestroyBoolArray(ba);
  CHECK_EQ(stat("live_arguments"), live);
  CHECK_EQ(aclDestroyTensor(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyScalar(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyIntArray(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyFloatArray(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyBoolArray(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyTensorList(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyScalarList(nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_INNER_NULLPTR);
  CHECK_ERR_HAS("aclDestroyAclOpExecutor", "nullptr");
  CHECK_EQ(stat("live_arguments"), live);
}

// nnopbase's creation checks almost nothing (operators check at phase 1):
// only missing dimension arrays, a missing scalar value and a scalar dtype
// it cannot hold fail.
TEST(creation_accepts_what_nnopbase_accepts) {
  const int64_t live = stat("live_arguments");
  int64_t dims[] = {2, 3}, strides[] = {3, 1}, negative[] = {2, -1};
  float f = 1.5f;
  CHECK(aclCreateTensor(nullptr, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr) == nullptr);
  CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, nullptr, 1, nullptr) == nullptr);
  CHECK(aclCreateScalar(nullptr, ACL_FLOAT) == nullptr);
  CHECK(aclCreateScalar(&f, static_cast<aclDataType>(55)) == nullptr);
  CHECK_ERR_HAS("aclCreateScalar", "dataType 55");
  CHECK_EQ(stat("live_arguments"), live);

  aclTensor* oddDtype = aclCreateTensor(dims, 2, static_cast<aclDataType>(99), strides, 0, ACL_FORMAT_ND, dims, 2,
                                        nullptr);
  aclTensor* negativeDims = aclCreateTensor(negative, 2, ACL_FLOAT, strides, -4, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* noStrides = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  aclTensor* scalarShape = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, nullptr);
  aclIntArray* emptyInts = aclCreateIntArray(nullptr, 3);  // a null value makes an empty array
  aclTensorList* emptyList = aclCreateTensorList(nullptr, 1);
  CHECK(oddDtype && negativeDims && noStrides && scalarShape && emptyInts && emptyList);
  CHECK_EQ(stat("live_arguments"), live + 6);

  // A null stride means contiguous: a (2, 3) view of a 6-element storage.
  setDevice(0);
  {
    DevTensor storage(0, {6}), copy(0, {2, 3});
    storage.write<float>({0, 1, 2, 3, 4, 5});
    aclTensor* contiguous = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, storage.data());
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(copy.get(), contiguous, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
    CHECK_VALUES(copy.read<float>(), 0, 1, 2, 3, 4, 5);
    // ... and the operators reject at phase 1 what creation let through.
    CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(copy.get(), negativeDims, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_ERR_HAS("aclnnInplaceCopy", "argument 'src'", "size -1");
    CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(copy.get(), oddDtype, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_ERR_HAS("aclnnInplaceCopy", "argument 'src'");
    aclDestroyTensor(contiguous);
  }

  for (aclTensor* t : {oddDtype, negativeDims, noStrides, scalarShape}) aclDestroyTensor(t);
  aclDestroyIntArray(emptyInts);
  aclDestroyTensorList(emptyList);
  CHECK_EQ(stat("live_arguments"), live);
  // CANN deletes whatever it is given; the simulator catches a double free.
  aclTensor* once = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  CHECK_EQ(aclDestroyTensor(once), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyTensor(once), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclDestroyTensor", "not a live aclTensor");
}

// aclnnInplaceFillScalar with a scalar of each dtype reads the value right.
TEST(scalars_keep_their_dtype) {
  setDevice(0);
  DevTensor t(0, {1});
  auto fill = [&](aclDataType dtype, const void* value) {
    aclScalar* s = aclCreateScalar(const_cast<void*>(value), dtype);
    CHECK(s != nullptr);
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    CHECK_EQ(aclnnInplaceFillScalarGetWorkspaceSize(t.get(), s, &ws, &e), ACLNN_SUCCESS);
    aclDestroyScalar(s);  // values are read at phase 1
    CHECK_EQ(launch(aclnnInplaceFillScalar, ws, e), ACLNN_SUCCESS);
    return t.read<float>()[0];
  };
  float f32 = 2.5f;
  double f64 = -2.5;
  uint16_t f16 = 0x4100, bf16 = 0x4020;  // 2.5
  int8_t i8 = -3;
  int16_t i16 = -300;
  int32_t i32 = 70000;
  int64_t i64 = int64_t{1} << 40;
  uint8_t u8 = 200;
  bool b = true;
  CHECK_EQ(fill(ACL_FLOAT, &f32), 2.5f);
  CHECK_EQ(fill(ACL_DOUBLE, &f64), -2.5f);
  CHECK_EQ(fill(ACL_FLOAT16, &f16), 2.5f);
  CHECK_EQ(fill(ACL_BF16, &bf16), 2.5f);
  CHECK_EQ(fill(ACL_INT8, &i8), -3.0f);
  CHECK_EQ(fill(ACL_INT16, &i16), -300.0f);
  CHECK_EQ(fill(ACL_INT32, &i32), 70000.0f);
  CHECK_EQ(fill(ACL_INT64, &i64), 1099511627776.0f);
  CHECK_EQ(fill(ACL_UINT8, &u8), 200.0f);
  CHECK_EQ(fill(ACL_BOOL, &b), 1.0f);
}

// ---- operators on matching devices ----------------------------------------------------

TEST(add_computes_with_broadcast) {
  setDevice(1);
  fsimResetStats();
  DevTensor self(1, {2, 3}), other(1, {3}), out(1, {2, 3});
  self.write<float>({0, 1, 2, 3, 4, 5});
  other.write<float>({10, 20, 30});
  CHECK_EQ(add(self, other, 2.0f, out), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 20, 41, 62, 23, 44, 65);
  CHECK_EQ(stat("launches", "1"), 1);
  CHECK_EQ(stat("op_launches", "aclnnAdd"), 1);

  DevTensor a(1, {3}, ACL_INT32), b(1, {3}, ACL_INT32), c(1, {3}, ACL_INT32);
  a.write<int32_t>({1, 2, 3});
  b.write<int32_t>({100, 200, 300});
  int64_t three = 3;
  std::unique_ptr<aclScalar, decltype(&aclDestroyScalar)> alpha(aclCreateScalar(&three, ACL_INT64), &aclDestroyScalar);
  CHECK_EQ(add(a, b, alpha.get(), c), ACLNN_SUCCESS);
  CHECK_VALUES(c.read<int32_t>(), 301, 602, 903);
  CHECK_EQ(add(a, b, 1.5f, c), ACL_ERROR_RT_AICORE_EXCEPTION);  // ATen refuses a float alpha for ints, when it runs
  CHECK_ERR_HAS("aclnnAdd: kernel failed", "alpha");
}

TEST(adds_and_inplace_add_compute) {
  setDevice(2);
  DevTensor self(2, {3}), out(2, {3}), other(2, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  ScalarPtr five = floatScalar(5), half = floatScalar(0.5f);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddsGetWorkspaceSize(self.get(), five.get(), half.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdds, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 3.5f, 4.5f, 5.5f);
  CHECK_EQ(aclnnInplaceAddGetWorkspaceSize(self.get(), other.get(), five.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceAdd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(self.read<float>(), 6, 7, 8);
}

TEST(cast_converts) {
  setDevice(0);
  DevTensor self(0, {3}), toInt(0, {3}, ACL_INT32), toHalf(0, {3}, ACL_FLOAT16);
  self.write<float>({1.5f, -2.25f, 3.0f});
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_INT32, toInt.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(toInt.read<int32_t>(), 1, -2, 3);
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT16, toHalf.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(toHalf.read<uint16_t>(), 0x3E00, 0xC080, 0x4200);
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT16, toInt.get(), &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnCast", "'out'", "'dtype'");
}

TEST(inplace_copy_handles_strides_offsets_and_dtypes) {
  setDevice(3);
  DevTensor storage(3, {2, 3}), dst(3, {3, 2}), ints(3, {3}, ACL_INT32), floats(3, {3});
  storage.write<float>({0, 1, 2, 3, 4, 5});
  aclTensor* transposed = storage.view({3, 2}, {1, 3}, 0);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(dst.get(), transposed, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
  aclDestroyTensor(transposed);
  CHECK_VALUES(dst.read<float>(), 0, 3, 1, 4, 2, 5);

  aclTensor* row1 = storage.view({3}, {1}, 3);  // offset 3 elements: the second row
  CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(floats.get(), row1, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
  aclDestroyTensor(row1);
  CHECK_VALUES(floats.read<float>(), 3, 4, 5);

  CHECK_EQ(aclnnInplaceCopyGetWorkspaceSize(ints.get(), floats.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceCopy, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(ints.read<int32_t>(), 3, 4, 5);
}

TEST(fill_and_zero_touch_only_the_view) {
  setDevice(1);
  DevTensor t(1, {6});
  t.write<float>({9, 9, 9, 9, 9, 9});
  aclTensor* everyOther = t.view({3}, {2}, 1);  // elements 1, 3, 5
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(everyOther, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceZero, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(t.read<float>(), 9, 0, 9, 0, 9, 0);
  ScalarPtr seven = floatScalar(7);
  CHECK_EQ(aclnnInplaceFillScalarGetWorkspaceSize(everyOther, seven.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceFillScalar, ws, e), ACLNN_SUCCESS);
  aclDestroyTensor(everyOther);
  CHECK_VALUES(t.read<float>(), 9, 7, 9, 7, 9, 7);

  DevTensor longs(1, {2}, ACL_INT64);
  CHECK_EQ(aclnnInplaceFillScalarGetWorkspaceSize(longs.get(), seven.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnInplaceFillScalar, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(longs.read<int64_t>(), 7, 7);
}

// ---- launch validation ------------------------------------------------------------

// The seed bug: tensors of device 0, launched while device 1 is current.
TEST(launch_rejects_tensors_of_another_device) {
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  out.write<float>({-1, -1, -1});
  setDevice(1);
  fsimResetStats();
  const int64_t executors = stat("live_executors");
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_EQ(lastError(),
           "aclnnAdd: argument 'self' lives on device 0 but the launch runs on device 1 "
           "(current device 1, stream of device 1)");
  CHECK_VALUES(out.read<float>(), -1, -1, -1);  // the kernel did not run
  CHECK_EQ(stat("rejected_launches"), 1);
  CHECK_EQ(stat("mismatched_launches"), 1);
  CHECK_EQ(stat("launches", "1"), 0);
  CHECK_EQ(stat("launches", "0"), 0);
  CHECK_EQ(stat("live_executors"), executors);  // phase 2 destroyed it anyway

  setDevice(0);  // the fix: make the tensors' device current
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 2, 3, 4);
  CHECK_EQ(stat("launches", "0"), 1);
}

TEST(launch_rejects_output_of_another_device) {
  DevTensor self(2, {3}), other(2, {3}), out(3, {3});
  setDevice(2);
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "argument 'out' lives on device 3", "runs on device 2");
}

TEST(launch_rejects_stream_of_another_device) {
  setDevice(2);
  aclrtStream s2 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  CHECK_EQ(add(self, other, 1.0f, out, s2), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "stream belongs to device 2", "runs on device 0");
  aclrtStream s0 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s0), ACL_SUCCESS);
  CHECK_EQ(add(self, other, 1.0f, out, s0), ACLNN_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s0), ACL_SUCCESS);
  setDevice(2);  // a stream is destroyed from its own device
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
}

TEST(launch_rejects_workspace_of_another_device) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  CHECK_EQ(add(self, other, 1.0f, out, nullptr, 1), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "workspace lives on device 1", "runs on device 0");
}

// The "wrapped number" trap: a host address passed as a tensor.
TEST(launch_rejects_host_pointer) {
  setDevice(0);
  DevTensor self(0, {3}), out(0, {3});
  std::vector<float> host = {0.5f, 0.5f, 0.5f};
  int64_t dims[] = {3}, strides[] = {1};
  aclTensor* other = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 1, host.data());
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other, one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "argument 'other'", "is not device memory");
  aclDestroyTensor(other);
}

TEST(launch_rejects_thread_without_device) {
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  DeviceMem workspace(0, 64);
  ScalarPtr one = floatScalar(1);
  aclnnStatus rc = ACLNN_SUCCESS;
  std::string message;
  onFreshThread([&] {
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    if (aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e) != ACLNN_SUCCESS) return;
    rc = aclnnAdd(workspace.get(), ws, e, nullptr);
    message = lastError();
  });
  CHECK_EQ(rc, ACLNN_ERR_RUNTIME_ERROR);
  CHECK(message.find("no current device") != std::string::npos);
}

TEST(launch_rejects_tensor_outside_its_allocation) {
  setDevice(0);
  fsimResetStats();
  DevTensor small(0, {4}), out(0, {8});
  aclTensor* tooLong = small.view({8}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(tooLong, tooLong, one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "argument 'self'", "outside its allocation");
  aclDestroyTensor(tooLong);
  CHECK_EQ(stat("rejected_launches"), 1);
  CHECK_EQ(stat("mismatched_launches"), 0);
}

TEST(launch_checks_the_workspace) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  ScalarPtr one = floatScalar(1);
  DeviceMem tiny(0, 8);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  auto phase1 = [&] {
    CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  };
  phase1();
  CHECK_EQ(aclnnAdd(nullptr, 0, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "workspaceSize 0", "64");
  phase1();
  CHECK_EQ(aclnnAdd(nullptr, ws, e, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("workspace is nullptr");
  // ... which destroys the executor, even a repeatable one (as CANN's).
  const int64_t executors = stat("live_executors");
  phase1();
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  CHECK_EQ(stat("live_executors"), executors + 1);
  CHECK_EQ(aclnnAdd(nullptr, ws, e, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(stat("live_executors"), executors);
  phase1();
  CHECK_EQ(aclnnAdd(tiny.get(), ws, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("workspace", "overruns");
  phase1();
  std::vector<char> host(ws);
  CHECK_EQ(aclnnAdd(host.data(), ws, e, nullptr), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("workspace", "is not device memory");
}

TEST(nan_mode_poisons_outputs_and_succeeds) {
  NanMode nan;
  CHECK_EQ(fsimGetMismatchMode(), FSIM_MISMATCH_NAN);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  DevTensor a(0, {2}, ACL_INT32), c(0, {2}, ACL_INT32), half(0, {3}, ACL_FLOAT16);
  self.write<float>({1, 2, 3});
  setDevice(1);
  fsimResetStats();
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  for (float v : out.read<float>()) CHECK(std::isnan(v));
  CHECK_EQ(add(a, a, 1.0f, c), ACLNN_SUCCESS);  // poisoned before any kernel could object
  CHECK_VALUES(c.read<int32_t>(), -1, -1);  // 0xFF bytes
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT16, half.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(half.read<uint16_t>(), 0x7E00, 0x7E00, 0x7E00);
  CHECK_VALUES(self.read<float>(), 1, 2, 3);  // inputs untouched
  CHECK_EQ(stat("mismatched_launches"), 3);
  CHECK_EQ(stat("rejected_launches"), 0);
  CHECK_EQ(stat("launches", "1"), 0);
}

TEST(executor_is_single_use_unless_repeatable) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  ScalarPtr one = floatScalar(1);
  DeviceMem workspace(0, 64);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "not live");
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_PARAM_INVALID);

  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnCast(workspace.get(), ws, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnCast", "built by aclnnAddGetWorkspaceSize");
  CHECK_EQ(aclnnAdd(workspace.get(), ws, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

TEST(repeatable_executor_is_rebound_and_relaunched) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  DevTensor self(0, {3}), other(0, {3}), other2(0, {3}), out(0, {3}), out2(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({10, 10, 10});
  other2.write<float>({100, 100, 100});
  out2.write<float>({0, 0, 0});
  // The executor uses these very aclTensor objects until it is destroyed.
  aclTensor* selfT = self.view({3}, {1}, 0);
  aclTensor* otherT = other.view({3}, {1}, 0);
  aclTensor* outT = out.view({3}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, otherT, one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 11, 12, 13);

  // Rebinding updates the objects bound at phase 1, by index.
  CHECK_EQ(aclSetInputTensorAddr(e, 1, otherT, other2.data()), ACLNN_SUCCESS);  // 'other'
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, out2.data()), ACLNN_SUCCESS);    // 'out'
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(out2.read<float>(), 101, 102, 103);
  CHECK_VALUES(out.read<float>(), 11, 12, 13);

  // nnopbase rejects a null tensor (561103); any other aclTensor than the
  // bound one would change while the executor kept reading the old address.
  CHECK_EQ(aclSetInputTensorAddr(e, 1, nullptr, other2.data()), ACLNN_ERR_INNER_NULLPTR);
  CHECK_ERR_HAS("aclSetInputTensorAddr", "tensor is nullptr");
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, nullptr, out2.data()), ACLNN_ERR_INNER_NULLPTR);
  CHECK_EQ(aclSetInputTensorAddr(nullptr, 1, otherT, other2.data()), ACLNN_ERR_INNER_NULLPTR);
  aclTensor* foreign = other2.view({3}, {1}, 0);
  CHECK_EQ(aclSetInputTensorAddr(e, 1, foreign, other2.data()), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclSetInputTensorAddr", "is not the input 1", "executor was built with");
  CHECK_EQ(aclSetInputTensorAddr(e, 0, otherT, other2.data()), ACLNN_ERR_PARAM_INVALID);  // right tensor, wrong index
  aclDestroyTensor(foreign);
  CHECK_EQ(aclSetInputTensorAddr(e, 2, otherT, other2.data()), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclSetInputTensorAddr", "index 2", "2 inputs");
  CHECK_EQ(aclSetOutputTensorAddr(e, 1, outT, out2.data()), ACLNN_ERR_PARAM_INVALID);

  // A rebinding to another device is caught at the next launch.
  DevTensor elsewhere(1, {3});
  CHECK_EQ(aclSetInputTensorAddr(e, 0, selfT, elsewhere.data()), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("argument 'self' lives on device 1");
  CHECK_EQ(stat("live_executors"), executors + 1);  // a failed launch keeps it too

  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  CHECK_EQ(stat("live_executors"), executors);
  CHECK_EQ(aclSetInputTensorAddr(e, 0, selfT, other2.data()), ACLNN_ERR_PARAM_INVALID);
  for (aclTensor* t : {selfT, otherT, outT}) aclDestroyTensor(t);
}

// A repeatable executor relaunched with the same addresses, workspace,
// stream and current device skips the argument check while nothing it
// depended on changed; a change makes the next launch check again.
TEST(relaunch_is_checked_again_after_a_change) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({10, 10, 10});
  aclTensor* selfT = self.view({3}, {1}, 0);
  void* outMem = nullptr;
  CHECK_EQ(aclrtMalloc(&outMem, 3 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  const int64_t dims[] = {3}, strides[] = {1}, storage = 3;
  aclTensor* outT = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, &storage, 1, outMem);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, other.get(), one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  DeviceMem workspace(0, ws);
  auto relaunch = [&]() -> int32_t {
    const aclnnStatus status = aclnnAdd(workspace.get(), ws, e, nullptr);
    return status != ACLNN_SUCCESS ? status : aclrtSynchronizeStream(nullptr);
  };
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);  // nothing changed

  setDevice(1);  // the current device
  CHECK_EQ(relaunch(), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "lives on device 0");
  setDevice(0);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);

  CHECK_EQ(aclrtFree(outMem), ACL_SUCCESS);  // memory of a bound tensor
  CHECK_EQ(relaunch(), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("argument 'out'", "is not device memory");
  DevTensor out2(0, {3});
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, out2.data()), ACLNN_SUCCESS);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);
  CHECK_VALUES(out2.read<float>(), 11, 12, 13);

  aclDestroyTensor(selfT);  // a bound aclTensor
  CHECK_EQ(relaunch(), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("argument 'self'", "was destroyed after phase 1");
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  aclDestroyTensor(outT);
}

// nnopbase's executors read the caller's aclTensor objects at phase 2: one
// destroyed after phase 1 would be a use after free on CANN.
TEST(executor_needs_its_tensors_until_launched) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  aclTensor* selfT = self.view({3}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  aclDestroyTensor(selfT);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "argument 'self'", "was destroyed after phase 1");
  // Even when a new aclTensor reuses the address.
  aclTensor* first = self.view({3}, {1}, 0);
  CHECK_EQ(aclnnAddGetWorkspaceSize(first, other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  aclDestroyTensor(first);
  std::vector<aclTensor*> fresh;
  for (int i = 0; i < 64; ++i) fresh.push_back(self.view({3}, {1}, 0));
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("was destroyed after phase 1");
  for (aclTensor* t : fresh) aclDestroyTensor(t);
}

// An operator whose output shape depends on the data cannot be replayed:
// CANN refuses to make its executor repeatable (561000).
TEST(data_dependent_operator_is_not_repeatable) {
  setDevice(0);
  DevTensor self(0, {4}), mask(0, {4}, ACL_BOOL), out(0, {4});
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnMaskedSelectGetWorkspaceSize(self.get(), mask.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_INNER);
  CHECK_EQ(launch(aclnnMaskedSelect, ws, e), ACLNN_SUCCESS);  // once, then it is gone
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
}

TEST(phase1_reports_bad_arguments) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  DevTensor self(0, {3}), out(0, {3}), u16(0, {3}, ACL_UINT16);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(nullptr, self.get(), one.get(), out.get(), &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(lastError(), "aclnnAdd: argument 'self' is nullptr");
  CHECK(e == nullptr);
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), self.get(), nullptr, out.get(), &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("'alpha'");
  CHECK_EQ(aclnnAddGetWorkspaceSize(u16.get(), self.get(), one.get(), out.get(), &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "argument 'self'", "ACL_UINT16", "ACL_FLOAT");
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), self.get(), one.get(), out.get(), nullptr, &e),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("workspaceSize");
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), self.get(), one.get(), out.get(), &ws, nullptr),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), static_cast<aclDataType>(42), out.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnCast", "'dtype'");
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(nullptr, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("aclnnInplaceZero", "'selfRef'");
  // CANN's operators take at most 8 dimensions.
  std::vector<int64_t> nine(9, 1), nineStrides(9, 1);
  aclTensor* deep = self.view(nine, nineStrides, 0);
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(deep, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnInplaceZero", "9 dimensions", "at most 8");
  aclDestroyTensor(deep);
  aclTensor* backwards = self.view({3}, {-1}, 2);
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(backwards, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("stride -1");
  aclDestroyTensor(backwards);
  CHECK_EQ(stat("live_executors"), executors);
}

using IntArrayPtr = std::unique_ptr<aclIntArray, decltype(&aclDestroyIntArray)>;
IntArrayPtr ints(std::vector<int64_t> values) {
  return IntArrayPtr(aclCreateIntArray(values.data(), values.size()), &aclDestroyIntArray);
}

// The operators below check at phase 1 what CANN's docs require of them
// (Atlas A2/A3), with CANN's status codes.
TEST(convolution_checks_its_arguments_at_phase_1) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // aclnnConvolution: FLOAT, FLOAT16, BFLOAT16; one stride/padding/dilation value per spatial dim.
  DevTensor x(0, {1, 2, 5, 5}), w(0, {4, 2, 3, 3}), y(0, {1, 4, 3, 3});
  DevTensor x64(0, {1, 2, 5, 5}, ACL_DOUBLE), w64(0, {4, 2, 3, 3}, ACL_DOUBLE), y64(0, {1, 4, 3, 3}, ACL_DOUBLE);
  auto one2 = ints({1, 1}), zero2 = ints({0, 0}), one1 = ints({1});
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(nullptr, w.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("aclnnConvolution", "'input'");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x64.get(), w64.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y64.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnConvolution", "ACL_DOUBLE");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one1.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("stride");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 2, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("groups");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one2.get(), ints({1, 0}).get(), one2.get(),
                                            false, zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("inferred");
  CHECK_EQ(stat("live_executors"), executors);
}

TEST(upsampling_checks_its_arguments_at_phase_1) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // Dtypes per operator, output [N, C, *outputSize], no negative scale, and (bilinear) no empty tensor.
  DevTensor img(0, {1, 1, 2, 2}), up(0, {1, 1, 4, 4}), img64(0, {1, 1, 2, 2}, ACL_DOUBLE),
      up64(0, {1, 1, 4, 4}, ACL_DOUBLE), none(0, {0, 1, 2, 2}, ACL_FLOAT, 1), noneUp(0, {0, 1, 4, 4}, ACL_FLOAT, 1);
  auto four = ints({4, 4});
  CHECK_EQ(aclnnUpsampleNearestExact2dGetWorkspaceSize(img64.get(), four.get(), 0, 0, up64.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnUpsampleNearestExact2d", "ACL_DOUBLE");
  CHECK_EQ(aclnnUpsampleNearest2dGetWorkspaceSize(img64.get(), four.get(), up64.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnUpsampleNearest2dGetWorkspaceSize(img.get(), ints({4, 5}).get(), up.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("outputSize");
  CHECK_EQ(aclnnUpsampleBilinear2dGetWorkspaceSize(img.get(), four.get(), false, -2.0, 2.0, up.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("negative");
  CHECK_EQ(aclnnUpsampleBilinear2dGetWorkspaceSize(none.get(), four.get(), false, 0, 0, noneUp.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("empty");
  CHECK_EQ(aclnnUpsampleNearest2dV2GetWorkspaceSize(img.get(), nullptr, 2.0f, 2.0f, up.get(), &ws, &e),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("'outputSize'");
  CHECK_EQ(stat("live_executors"), executors);
}

TEST(padding_checks_its_arguments_at_phase_1) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // Reflection and replication: each padding value >= 0 and smaller than the dim it pads;
  // replication takes no BOOL; the 2-d backward takes at most 7 for BFLOAT16.
  DevTensor row(0, {1, 1, 3}), padded(0, {1, 1, 6}), flags(0, {1, 1, 3}, ACL_BOOL), flagsOut(0, {1, 1, 5}, ACL_BOOL);
  row.write<float>({1, 2, 3});
  CHECK_EQ(aclnnReflectionPad1dGetWorkspaceSize(row.get(), ints({2, 1}).get(), padded.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnReflectionPad1d, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(padded.read<float>(), 3, 2, 1, 2, 3, 2);
  CHECK_EQ(aclnnReplicationPad1dGetWorkspaceSize(row.get(), ints({3, 0}).get(), padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnReplicationPad1d", "smaller than the dim");
  CHECK_EQ(aclnnReflectionPad1dGetWorkspaceSize(row.get(), ints({-1, 4}).get(), padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_EQ(aclnnReplicationPad1dGetWorkspaceSize(flags.get(), ints({1, 1}).get(), flagsOut.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("ACL_BOOL");
  CHECK_EQ(aclnnReflectionPad1dGetWorkspaceSize(flags.get(), ints({1, 1}).get(), flagsOut.get(), &ws, &e),
           ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  DevTensor plane(0, {1, 9, 9}, ACL_BF16), grad(0, {1, 17, 9}, ACL_BF16), gradIn(0, {1, 9, 9}, ACL_BF16);
  CHECK_EQ(aclnnReplicationPad2dBackwardGetWorkspaceSize(grad.get(), plane.get(), ints({0, 0, 8, 0}).get(),
                                                         gradIn.get(), &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("at most 7");

  // aclnnConstantPadNd: an even pad, at most twice the dims; a negative value cuts.
  DevTensor cutOut(0, {1, 1, 1});
  ScalarPtr zero = floatScalar(0);
  CHECK_EQ(aclnnConstantPadNdGetWorkspaceSize(row.get(), ints({-1, -1}).get(), zero.get(), cutOut.get(), &ws, &e),
           ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnConstantPadNd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(cutOut.read<float>(), 2);
  CHECK_EQ(aclnnConstantPadNdGetWorkspaceSize(row.get(), ints({1}).get(), zero.get(), padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_EQ(aclnnConstantPadNdGetWorkspaceSize(row.get(), ints({1, 1}).get(), nullptr, padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(stat("live_executors"), executors);
}

// A kernel that fails when it runs (here ATen's shape check) fails its
// stream: the next synchronization reports ACL_ERROR_RT_AICORE_EXCEPTION with
// the kernel's message (see kernel_failure_is_reported_by_the_next_synchronization).
TEST(kernel_errors_fail_the_stream) {
  setDevice(0);
  DevTensor self(0, {2, 3}), other(0, {4}), out(0, {2, 3});
  CHECK_EQ(add(self, other, 1.0f, out), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "aclnnAdd: kernel failed", "size");
  CHECK(lastError().find("Exception raised from") == std::string::npos);
}

TEST(faults_are_injected_and_leak_nothing) {
  setDevice(0);
  const int64_t executors = stat("live_executors"), allocations = stat("live_allocations", "0");
  {
    DevTensor self(0, {3}), other(0, {3}), out(0, {3});
    self.write<float>({1, 2, 3});
    other.write<float>({1, 1, 1});
    ScalarPtr one = floatScalar(1);
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    fsimInjectFault("aclnnAdd", 1, 1);
    CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_ERR_INNER);
    CHECK_EQ(lastError(), "aclnnAdd: injected fault at phase 1");
    CHECK(e == nullptr);
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);  // count 1: used up

    fsimInjectFault("aclnnAdd", 2, 2);
    out.write<float>({0, 0, 0});
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
    CHECK_EQ(lastError(), "aclnnAdd: injected fault at phase 2");
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
    CHECK_VALUES(out.read<float>(), 0, 0, 0);
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
    CHECK_VALUES(out.read<float>(), 2, 3, 4);

    fsimInjectFault("aclnnCast", 1, 5);
    fsimInjectFault("aclnnCast", 1, 0);  // count 0 clears
    CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT, out.get(), &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    fsimInjectFault("aclnnAdd", 2, 3);
    fsimClearFaults();
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);

    fsimInjectFault(nullptr, 1, 1);
    CHECK_ERR_HAS("fsimInjectFault");
    fsimInjectFault("aclnnAdd", 4, 1);
    CHECK_ERR_HAS("fsimInjectFault", "phase 4");
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  }
  CHECK_EQ(stat("live_executors"), executors);
  CHECK_EQ(stat("live_allocations", "0"), allocations);
}

TEST(stats_json_lists_every_device) {
  std::string json = fsimStatsJson();
  for (const char* key : {"\"set_device_calls\": ", "\"rejected_launches\": ", "\"mismatched_launches\": ",
                          "\"op_launches\": {", "\"peer_copies\": ", "\"live_executors\": ",
                          "\"live_arguments\": "})
    CHECK(json.find(key) != std::string::npos);
  for (const char* map : {"\"launches\": {", "\"live_allocations\": {", "\"live_bytes\": {"}) {
    size_t begin = json.find(map), end = json.find('}', begin);
    CHECK(begin != std::string::npos);
    for (int d = 0; d < expectedDevices(); ++d) CHECK(json.find(cat("\"", d, "\": "), begin) < end);
    CHECK(json.find(cat("\"", expectedDevices(), "\": "), begin) > end);
  }
}

TEST(concurrent_launches_on_several_devices) {
  fsimResetStats();
  constexpr int kThreads = 4, kIterations = 40;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int d = 0; d < kThreads; ++d) {
    threads.emplace_back([d, &failures] {
      try {
        setDevice(d);
        for (int i = 0; i < kIterations; ++i) {
          DevTensor self(d, {64}), other(d, {64}), out(d, {64});
          self.write(std::vector<float>(64, static_cast<float>(i)));
          other.write(std::vector<float>(64, static_cast<float>(d)));
          CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
          CHECK_EQ(out.read<float>()[63], static_cast<float>(i + d));
        }
      } catch (const Failure& f) {
        failures[d] = f.what;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) CHECK_EQ(f, std::string());
  for (int d = 0; d < kThreads; ++d) CHECK_EQ(stat("launches", std::to_string(d)), kIterations);
  CHECK_EQ(stat("op_launches", "aclnnAdd"), kThreads * kIterations);
}

// ---- asynchronous streams -------------------------------------------------------

// Lazy streams (work runs only once something waits for it) for the rest of
// the case; then async again, and every held piece of work run.
struct LazyStreams {
  LazyStreams() { fsimSetStreamMode(FSIM_STREAMS_LAZY); }
  ~LazyStreams() {
    fsimSetStreamMode(FSIM_STREAMS_ASYNC);
    fsimDrainStreams();
  }
};

aclrtStreamStatus queryStream(aclrtStream stream) {
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  CHECK_EQ(aclrtStreamQuery(stream, &status), ACL_SUCCESS);
  return status;
}

std::string hazardReport() { return fsimHazardReport(); }

// aclnnAdd queued on `stream`, without synchronizing: `workspace` must live
// until the kernel has run.
aclnnStatus addAsync(const aclTensor* self, const aclTensor* other, float alpha, aclTensor* out,
                     const DeviceMem& workspace, aclrtStream stream = nullptr) {
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  ScalarPtr a = floatScalar(alpha);
  CHECK_EQ(aclnnAddGetWorkspaceSize(self, other, a.get(), out, &ws, &e), ACLNN_SUCCESS);
  CHECK(ws <= workspace.bytes());
  return aclnnAdd(workspace.get(), ws, e, stream);
}

// Each launch of a repeatable executor runs on the addresses bound at that
// launch, whatever is rebound while it waits in the queue, also when the
// executor reuses the snapshots of its finished launches and when more
// launches are queued than it keeps snapshots for.
TEST(queued_launches_of_one_executor_keep_their_addresses) {
  LazyStreams lazy;
  setDevice(0);
  constexpr int kLaunches = 2100;  // more than an executor keeps snapshots for (a stream's 2048)
  DevTensor self(0, {2});
  self.write<float>({1, 2});
  std::vector<std::unique_ptr<DevTensor>> others, outs;
  for (int i = 0; i < kLaunches; ++i) {
    others.push_back(std::make_unique<DevTensor>(0, std::vector<int64_t>{2}));
    others.back()->write<float>({10.0f * i, 20.0f * i});
    outs.push_back(std::make_unique<DevTensor>(0, std::vector<int64_t>{2}));
    outs.back()->write<float>({-1, -1});
  }
  aclTensor* otherT = others[0]->view({2}, {1}, 0);
  aclTensor* outT = outs[0]->view({2}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), otherT, one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  DeviceMem workspace(0, ws);
  auto launchAll = [&](int round) {
    for (int i = 0; i < kLaunches; ++i) {
      const int k = (i + round) % kLaunches;  // another pairing each round
      CHECK_EQ(aclSetInputTensorAddr(e, 1, otherT, others[k]->data()), ACLNN_SUCCESS);
      CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, outs[i]->data()), ACLNN_SUCCESS);
      CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
    }
    CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    for (int i = 0; i < kLaunches; ++i) {
      const int k = (i + round) % kLaunches;
      CHECK_VALUES(outs[i]->read<float>(), 1 + 10.0f * k, 2 + 20.0f * k);
    }
  };
  launchAll(0);  // every launch queued before any runs
  launchAll(7);  // the finished launches' snapshots reused
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  aclDestroyTensor(otherT);
  aclDestroyTensor(outT);
  CHECK_EQ(stat("hazards"), 0);
}

// In the default (async) mode a stream's worker runs its work without
// anybody waiting for it.
TEST(async_streams_run_work_by_themselves) {
  CHECK_EQ(fsimGetStreamMode(), FSIM_STREAMS_ASYNC);
  setDevice(2);
  DeviceMem x(2, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 0x11, 16, nullptr), ACL_SUCCESS);
  for (int i = 0; i < 1000 && queryStream(nullptr) != ACL_STREAM_STATUS_COMPLETE; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);  // observed complete: ordered for the host
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, x.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 0x11)));
}

// Work queued on one stream runs in order, after the call has returned;
// aclrtStreamQuery says NOT_READY until it has run.
TEST(streams_run_queued_work_in_order) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(1);
  DevTensor x(1, {4}, ACL_INT32);
  x.write<int32_t>({0, 0, 0, 0});
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 1, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 2, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);
  CHECK_VALUES(x.read<int32_t>(), 0x02020202, 0x02020202, 0x02020202, 0x02020202);
  CHECK_EQ(stat("hazards"), 0);
}

// CANN's aclrtMemcpy copies at once, without waiting for any stream ("no
// implicit device or stream synchronization"): a host read of memory that
// queued work writes sees it as it was, and is reported as a hazard.
TEST(sync_copy_does_not_wait_for_queued_work) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(0);
  DevTensor x(0, {4}, ACL_INT32);
  x.write<int32_t>({7, 7, 7, 7});
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 0, 16, nullptr), ACL_SUCCESS);
  CHECK_VALUES(x.read<int32_t>(), 7, 7, 7, 7);
  CHECK_EQ(stat("hazards"), 1);
  const std::string report = hazardReport();
  CHECK(report.find("aclrtMemcpy on the host reads device memory") != std::string::npos);
  CHECK(report.find("that aclrtMemsetAsync on the default stream of device 0 writes") != std::string::npos);
  CHECK(report.find("read after write") != std::string::npos);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_VALUES(x.read<int32_t>(), 0, 0, 0, 0);
  CHECK_EQ(stat("hazards"), 1);  // the synchronized read is ordered
  fsimResetStats();
  CHECK_EQ(stat("hazards"), 0);
  CHECK_EQ(hazardReport(), "");
}

// A launch queues the kernel with its arguments of that moment: rebinding a
// repeatable executor, destroying it and its aclTensor objects after the
// launch change nothing for the queued kernel.
TEST(launch_queues_the_kernel_with_the_arguments_of_that_moment) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), other2(0, {3}), out(0, {3}), out2(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({10, 10, 10});
  other2.write<float>({100, 100, 100});
  out.write<float>({0, 0, 0});
  out2.write<float>({0, 0, 0});
  aclTensor* selfT = self.view({3}, {1}, 0);
  aclTensor* otherT = other.view({3}, {1}, 0);
  aclTensor* outT = out.view({3}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  DeviceMem workspace(0, 64);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, otherT, one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclSetInputTensorAddr(e, 1, otherT, other2.data()), ACLNN_SUCCESS);
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, out2.data()), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  for (aclTensor* t : {selfT, otherT, outT}) aclDestroyTensor(t);
  CHECK_EQ(stat("launches", "0"), 2);  // counted when queued
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_VALUES(out.read<float>(), 11, 12, 13);
  CHECK_VALUES(out2.read<float>(), 101, 102, 103);
  CHECK_EQ(stat("hazards"), 0);
}

// A stream that waits for an event does not run past the wait before the
// event's record has completed, on whatever device it was recorded; the
// same copy without the wait reads the memory before the write it should
// have waited for, and is a hazard.
TEST(event_wait_orders_streams_across_devices) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(0);
  DevTensor x(0, {4}, ACL_INT32);
  x.write<int32_t>({0, 0, 0, 0});
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  setDevice(1);
  DevTensor y(1, {4}, ACL_INT32);
  y.write<int32_t>({0, 0, 0, 0});
  CHECK_EQ(aclrtDeviceEnablePeerAccess(0, 0), ACL_SUCCESS);
  aclrtStream s1 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);

  setDevice(0);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 5, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtStreamWaitEvent(s1, e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(y.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s1), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);  // runs device 0's memset first
  CHECK_VALUES(y.read<int32_t>(), 0x05050505, 0x05050505, 0x05050505, 0x05050505);
  CHECK_EQ(stat("hazards"), 0);

  // The control: no wait.
  setDevice(0);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 9, 16, nullptr), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtMemcpyAsync(y.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s1), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 1);
  CHECK(hazardReport().find("aclrtMemcpyAsync on stream") != std::string::npos);
  CHECK_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);
  CHECK_VALUES(y.read<int32_t>(), 0x05050505, 0x05050505, 0x05050505, 0x05050505);  // stale
  CHECK_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// Two streams writing one allocation with nothing ordering them is a hazard
// whatever the workers' timing; an event between them removes it.
TEST(hazards_between_streams_do_not_depend_on_timing) {
  fsimResetStats();
  setDevice(0);
  aclrtStream a = nullptr, b = nullptr;
  CHECK_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
  DeviceMem x(0, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);  // long done, but b never learned it
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 2, 16, b), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 0);  // the host saw a's memset complete before queuing b's
  CHECK_EQ(aclrtSynchronizeStream(b), ACL_SUCCESS);
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 2, 16, b), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 1);
  CHECK(hazardReport().find("write after write") != std::string::npos);
  CHECK_EQ(aclrtRecordEvent(e, b), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(a, e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 3, 16, a), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 1);
  CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, x.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 3)));
  CHECK_EQ(stat("hazards"), 1);
  CHECK_EQ(aclrtSynchronizeStream(b), ACL_SUCCESS);
  for (aclrtStream s : {a, b}) CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// aclrtSynchronizeDevice waits for every stream of the current device.
TEST(synchronize_device_waits_for_every_stream) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(2);
  aclrtStream a = nullptr, b = nullptr;
  CHECK_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
  DeviceMem x(2, 16), y(2, 16), z(2, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(y.get(), 16, 2, 16, b), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(z.get(), 16, 3, 16, nullptr), ACL_SUCCESS);
  for (aclrtStream s : {a, b, static_cast<aclrtStream>(nullptr)}) CHECK_EQ(queryStream(s), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  for (aclrtStream s : {a, b, static_cast<aclrtStream>(nullptr)}) CHECK_EQ(queryStream(s), ACL_STREAM_STATUS_COMPLETE);
  uint8_t v[3] = {0, 0, 0};
  CHECK_EQ(aclrtMemcpy(&v[0], 1, x.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(&v[1], 1, y.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(&v[2], 1, z.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(int(v[0]) * 100 + int(v[1]) * 10 + int(v[2]), 123);
  CHECK_EQ(stat("hazards"), 0);
  for (aclrtStream s : {a, b}) CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// An event completes, with its timestamp, when its stream gets to the
// record: until then it is NOT_READY and has no time (107006).
// aclrtSynchronizeEvent waits for that point only.
TEST(record_completes_when_the_stream_gets_there) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(0);
  DeviceMem x(0, 16), y(0, 16);
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(y.get(), 16, 2, 16, nullptr), ACL_SUCCESS);
  aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_NOT_READY);
  float ms = -1;
  CHECK_EQ(aclrtEventElapsedTime(&ms, e, e), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "has not completed yet");
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  CHECK_EQ(aclrtEventElapsedTime(&ms, e, e), ACL_SUCCESS);
  CHECK_EQ(ms, 0.0f);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);  // the second memset is still held
  uint8_t v = 0;
  CHECK_EQ(aclrtMemcpy(&v, 1, x.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(int(v), 1);
  CHECK_EQ(stat("hazards"), 0);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// A wait waits for the event's record at the time of the call: recording the
// event again later does not move it.
TEST(stream_wait_captures_the_record_of_that_moment) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(0);
  aclrtStream a = nullptr, b = nullptr;
  CHECK_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
  DeviceMem x(0, 16), y(0, 16), z(0, 16);
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, a), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(b, e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(z.get(), 16, 2, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, a), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(y.get(), 16, x.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, b), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(b), ACL_SUCCESS);
  CHECK_EQ(queryStream(a), ACL_STREAM_STATUS_NOT_READY);  // z's memset and the second record: not needed
  uint8_t v = 0;
  CHECK_EQ(aclrtMemcpy(&v, 1, y.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(int(v), 1);
  CHECK_EQ(stat("hazards"), 0);
  CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
  for (aclrtStream s : {a, b}) CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// A kernel that fails when it runs does not fail its launch: the next
// synchronization of its stream (or device) reports
// ACL_ERROR_RT_AICORE_EXCEPTION with the kernel's message, once; the work
// queued after it still runs (CANN's default continue-on-failure mode). An
// event synchronization leaves the error to the stream.
TEST(kernel_failure_is_reported_by_the_next_synchronization) {
  fsimResetStats();
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3}), out2(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  DeviceMem workspace(0, 64);
  fsimInjectFault("aclnnAdd", 3, 1);
  CHECK_EQ(addAsync(self.get(), other.get(), 1, out.get(), workspace), ACLNN_SUCCESS);
  CHECK_EQ(addAsync(self.get(), other.get(), 1, out2.get(), workspace), ACLNN_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "aclnnAdd: injected fault at phase 3", "ACL_ERROR_RT_AICORE_EXCEPTION",
                "the default stream of device 0");
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);  // reported once
  CHECK_VALUES(out2.read<float>(), 2, 3, 4);
  CHECK_EQ(stat("failed_tasks"), 1);
  CHECK_EQ(stat("launches", "0"), 2);

  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  fsimInjectFault("aclnnAdd", 3, 1);
  CHECK_EQ(addAsync(self.get(), other.get(), 1, out.get(), workspace, s), ACLNN_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtSynchronizeDevice", "injected fault at phase 3");
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  // An ATen error inside the kernel, the same way.
  DevTensor wrong(0, {2});
  CHECK_EQ(addAsync(self.get(), wrong.get(), 1, out.get(), workspace, s), ACLNN_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclnnAdd: kernel failed");
  CHECK_EQ(stat("failed_tasks"), 3);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// An async copy with a pageable host side synchronizes the stream and copies
// at once (CANN's runtime does so), reporting the stream's pending error; with
// pinned memory it is queued like any work.
TEST(async_copy_of_pageable_memory_synchronizes_the_stream) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(1);
  DevTensor x(1, {4}, ACL_INT32);
  x.write<int32_t>({0, 0, 0, 0});
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 6, 16, nullptr), ACL_SUCCESS);
  std::vector<int32_t> out(4, 0);
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_VALUES(out, 0x06060606, 0x06060606, 0x06060606, 0x06060606);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);

  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  std::memset(pinned, 0, 16);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 8, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(pinned, 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_EQ(static_cast<uint8_t*>(pinned)[0], 0);  // queued
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(static_cast<uint8_t*>(pinned)[0], 8);
  CHECK_EQ(stat("hazards"), 0);

  DevTensor self(1, {4}), outT(1, {4});
  DeviceMem workspace(1, 64);
  fsimInjectFault("aclnnAdd", 3, 1);
  CHECK_EQ(addAsync(self.get(), self.get(), 1, outT.get(), workspace), ACLNN_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
           ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "injected fault at phase 3");
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
}

// Freeing memory that queued work still uses succeeds at once, as CANN's
// aclrtFree does (no implicit synchronization), and is a hazard; the memory
// stays mapped until the work has run, so the simulator itself never touches
// unmapped memory.
TEST(free_of_memory_in_use_is_a_hazard_but_safe) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(0);
  const int64_t live = stat("live_allocations", "0");
  auto* self = new DevTensor(0, {3});
  DevTensor other(0, {3}), out(0, {3});
  self->write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  DeviceMem workspace(0, 64);
  CHECK_EQ(addAsync(self->get(), other.get(), 1, out.get(), workspace), ACLNN_SUCCESS);
  delete self;  // destroys its aclTensor and frees its memory: the queued kernel still reads it
  CHECK_EQ(stat("live_allocations", "0"), live + 3);
  CHECK_EQ(stat("hazards"), 1);
  CHECK(hazardReport().find("aclrtFree on the host writes device memory") != std::string::npos);
  CHECK(hazardReport().find("that aclnnAdd on the default stream of device 0 reads") != std::string::npos);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_VALUES(out.read<float>(), 2, 3, 4);
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(pinned, 16, 4, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 2);
  CHECK_EQ(stat("live_pinned_allocations"), 0);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_ERROR_RT_PARAM_INVALID);  // freed already
}

// Destroying a stream, and the reset that tears a device down, wait for the
// work queued on it first (as CANN's documentation says).
TEST(destroy_and_reset_wait_for_queued_work) {
  LazyStreams lazy;
  fsimResetStats();
  setDevice(3);
  DevTensor x(3, {4}, ACL_INT32);
  x.write<int32_t>({0, 0, 0, 0});
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 3, 16, s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_VALUES(x.read<int32_t>(), 0x03030303, 0x03030303, 0x03030303, 0x03030303);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 4, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtResetDeviceForce(3), ACL_SUCCESS);
  setDevice(3);
  CHECK_VALUES(x.read<int32_t>(), 0x04040404, 0x04040404, 0x04040404, 0x04040404);
  CHECK_EQ(stat("hazards"), 0);
}

// aclrtMemsetAsync: count 0 succeeds first; null 100000; count beyond
// maxCount 107000; a stream of another device 107003, a stale one 107017; no
// device 107002; pageable memory and overruns 107000 (the driver decides).
TEST(memset_async_checks_and_queues) {
  setDevice(2);
  aclrtStream s2 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  setDevice(1);
  DeviceMem a(1, 16);
  std::vector<uint8_t> pageable(16, 0);
  CHECK_EQ(aclrtMemsetAsync(nullptr, 0, 0, 0, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(nullptr, 16, 0, 16, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemsetAsync", "nullptr");
  CHECK_EQ(aclrtMemsetAsync(a.get(), 8, 0, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "count 16", "maxCount 8");
  CHECK_EQ(aclrtMemsetAsync(a.get(), 16, 0, 16, s2), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtMemsetAsync", "belongs to device 2", "current device is 1");
  CHECK_EQ(aclrtMemsetAsync(pageable.data(), 16, 0, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "pageable host memory");
  CHECK_EQ(aclrtMemsetAsync(static_cast<char*>(a.get()) + 8, 16, 0, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "overrun");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtMemsetAsync(a.get(), 16, 0, 16, nullptr); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(aclrtMemsetAsync(a.get(), 16, 0x3C, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 0x3C)));
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtMemsetAsync(a.get(), 16, 0, 16, s2), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtMemsetAsync", "not a live stream");
}

// aclrtStreamQuery: status null 100000; a stale stream 107017; no device
// 107002; a stream of any device (CANN does not compare devices here).
// A stream's queue holds CANN's submission-queue depth (2048 positions):
// queueing one more waits for the worker to make room, here by running the
// oldest position (lazy mode runs nothing unless something waits).
TEST(a_full_stream_queue_makes_the_host_wait_for_room) {
  LazyStreams lazy;
  setDevice(3);
  DeviceMem first(3, 16), rest(3, 16);
  CHECK_EQ(aclrtMemsetAsync(first.get(), 16, 0x11, 16, nullptr), ACL_SUCCESS);
  for (int i = 1; i < 2048; ++i) CHECK_EQ(aclrtMemsetAsync(rest.get(), 16, i & 0xff, 16, nullptr), ACL_SUCCESS);
  auto firstNow = [&] {
    std::vector<uint8_t> out(16, 0);
    CHECK_EQ(aclrtMemcpy(out.data(), 16, first.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return out[0];
  };
  CHECK(firstNow() != 0x11);  // 2048 positions queued, none run
  CHECK_EQ(aclrtMemsetAsync(rest.get(), 16, 0, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(firstNow(), 0x11);  // the 2049th made room: the first ran
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

TEST(stream_query_checks_arguments) {
  setDevice(2);
  aclrtStream s2 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtStreamQuery(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtStreamQuery", "status is nullptr");
  CHECK_EQ(queryStream(s2), ACL_STREAM_STATUS_COMPLETE);
  aclError rc = ACL_SUCCESS;
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  onFreshThread([&] { rc = aclrtStreamQuery(nullptr, &status); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamQuery(s2, &status), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtStreamQuery", "not a live stream");
}

// ---- environment cases (run by test_sim_runtime.py with FLAGOS_SIM_* set) -----

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

int main(int argc, char** argv) {
  std::vector<const Case*> selected;
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const Case& c : cases()) std::printf("%s%s\n", c.name, c.env ? " env" : "");
    return 0;
  }
  if (argc == 1) {
    if (fsimDeviceCount() < 4) {
      std::printf("the default cases need at least 4 simulated devices (FLAGOS_SIM_DEVICES)\n");
      return 2;
    }
    for (const Case& c : cases())
      if (!c.env) selected.push_back(&c);
  }
  for (int i = 1; i < argc; ++i) {
    const Case* found = nullptr;
    for (const Case& c : cases())
      if (argv[i] == std::string(c.name)) found = &c;
    if (found == nullptr) {
      std::printf("unknown case '%s' (see --list)\n", argv[i]);
      return 2;
    }
    selected.push_back(found);
  }
  int failed = 0;
  for (const Case* c : selected) {
    try {
      c->fn();
      std::printf("PASS %s\n", c->name);
    } catch (const Failure& f) {
      ++failed;
      std::printf("FAIL %s: %s\n", c->name, f.what.c_str());
    }
    std::fflush(stdout);
    if (!c->env) {  // default cases leave no faults, modes or queued work behind
      fsimClearFaults();
      fsimSetMismatchMode(FSIM_MISMATCH_ERROR);
      fsimSetStreamMode(FSIM_STREAMS_ASYNC);
      fsimDrainStreams();
    }
  }
  std::printf("%zu passed, %d failed\n", selected.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}
