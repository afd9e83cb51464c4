// The simulator's own tests, run by tests/sim/test_sim_runtime.py.
//
//   flagos_sim_tests           run every default case (needs >= 4 devices)
//   flagos_sim_tests NAME...   run the named cases, environment cases included
//   flagos_sim_tests --list    list the cases ("env" marks environment cases)
//
// Environment cases expect a setting (FLAGOS_SIM_*) that the pytest side
// provides. Exit status 0 when every selected case passes.
#include <barrier>
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

#include "aclnn_ops.h"
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

[[noreturn]] void failAt(const char* file, int line, const std::string& what) {
  throw Failure{cat(file, ":", line, ": ", what, "\n    last error message: '", aclGetRecentErrMsg(), "'")};
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
    std::string msg_ = aclGetRecentErrMsg();                                                  \
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

// Phase 2 with a fresh workspace on `workspaceDevice` (-1: the current device).
aclnnStatus launch(Phase2 phase2, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream = nullptr,
                   int workspaceDevice = -1) {
  if (workspaceDevice < 0) CHECK_EQ(aclrtGetDevice(&workspaceDevice), ACL_SUCCESS);
  DeviceMem workspace(workspaceDevice, workspaceSize);
  return phase2(workspace.get(), workspaceSize, executor, stream);
}

// aclnnAdd(self, other, alpha, out) on the current device.
aclnnStatus add(const DevTensor& self, const DevTensor& other, const aclScalar* alpha, const DevTensor& out,
                aclrtStream stream = nullptr, int workspaceDevice = -1) {
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), alpha, out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK(ws > 0);
  return launch(aclnnAdd, ws, e, stream, workspaceDevice);
}
aclnnStatus add(const DevTensor& self, const DevTensor& other, float alpha, const DevTensor& out,
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
  CHECK_EQ(aclInit(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclInit(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(fresh_thread_has_no_current_device) {
  aclError rc = ACL_SUCCESS, syncRc = ACL_SUCCESS;
  int32_t device = -7;
  std::string message;
  onFreshThread([&] {
    rc = aclrtGetDevice(&device);
    message = aclGetRecentErrMsg();
    syncRc = aclrtSynchronizeDevice();
  });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(syncRc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(device, -7);
  CHECK(message.find("aclrtGetDevice") != std::string::npos);
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
  CHECK_EQ(aclrtSetDevice(n), ACL_ERROR_INVALID_DEVICE);
  CHECK_ERR_HAS("aclrtSetDevice", cat("device ", n), cat("0..", n - 1));
  CHECK_EQ(aclrtSetDevice(-1), ACL_ERROR_INVALID_DEVICE);
  int32_t device = -1;
  CHECK_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
  CHECK_EQ(device, 2);
  CHECK_EQ(aclrtResetDevice(2), ACL_SUCCESS);
  CHECK_EQ(aclrtResetDevice(n), ACL_ERROR_INVALID_DEVICE);
}

TEST(set_device_counts_every_call) {
  fsimResetStats();
  setDevice(0);
  setDevice(0);  // same device: still a call
  setDevice(1);
  CHECK_EQ(aclrtSetDevice(99), ACL_ERROR_INVALID_DEVICE);
  CHECK_EQ(stat("set_device_calls"), 4);
  fsimResetStats();
  CHECK_EQ(stat("set_device_calls"), 0);
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
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtDestroyStream", "not a live stream");
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(fsimStreamDevice(s), -1);
  CHECK_EQ(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtCreateStream(&s); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
}

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
  CHECK_EQ(aclrtRecordEvent(e, s2), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtRecordEvent", "device 1", "device 2");
  CHECK_EQ(aclrtStreamWaitEvent(s2, e), ACL_SUCCESS);  // waiting may cross devices
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "not a live event");
  CHECK_EQ(aclrtStreamWaitEvent(s2, e), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
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
  void* q = nullptr;
  CHECK_EQ(aclrtMalloc(&q, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMalloc", "size");
  CHECK_EQ(aclrtFree(c + 1), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtFree", "inside");
  CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
  CHECK_EQ(fsimPointerDevice(p), -1);
  CHECK_EQ(stat("live_allocations", "3"), count);
  CHECK_EQ(stat("live_bytes", "3"), bytes);
  CHECK_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtFree", "not device memory");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtMalloc(&q, 16, ACL_MEM_MALLOC_HUGE_FIRST); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
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

  CHECK_EQ(aclrtMemcpy(host.data(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemcpy", "ACL_MEMCPY_HOST_TO_DEVICE", "dst", "host memory");
  CHECK_EQ(aclrtMemcpy(out.data(), 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("ACL_MEMCPY_DEVICE_TO_HOST", "src");
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtMemcpy(host.data(), 16, a.get(), 16, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("ACL_MEMCPY_HOST_TO_HOST", "device memory (device 0)");
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, static_cast<aclrtMemcpyKind>(7)), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtMemcpy(nullptr, 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
}

TEST(memcpy_checks_bounds) {
  setDevice(0);
  DeviceMem a(0, 64);
  std::vector<char> host(128, 1);
  char* p = static_cast<char*>(a.get());
  CHECK_EQ(aclrtMemcpy(p, 64, host.data(), 65, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("count 65", "destMax 64");
  CHECK_EQ(aclrtMemcpy(p, 128, host.data(), 80, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("overrun");
  CHECK_EQ(aclrtMemcpy(p + 60, 8, host.data(), 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtMemcpy(host.data(), 128, p + 60, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtMemcpy(p + 56, 8, host.data(), 8, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(host.data(), 128, p + 56, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
}

TEST(memcpy_across_devices_needs_peer_access) {
  DeviceMem a(0, 16), b(1, 16);
  std::vector<int32_t> in = {5, 6, 7, 8}, out(4, 0);
  setDevice(0);
  CHECK_EQ(aclrtMemcpy(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_FAILURE);
  CHECK_ERR_HAS("aclrtMemcpy", "from device 0 to device 1", "peer access");

  int32_t can = -1;
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_SUCCESS);
  CHECK_EQ(can, 1);
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, 1, 1), ACL_SUCCESS);
  CHECK_EQ(can, 0);
  CHECK_EQ(aclrtDeviceCanAccessPeer(&can, 0, 99), ACL_ERROR_INVALID_DEVICE);
  CHECK_EQ(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM);  // peer == current
  CHECK_ERR_HAS("current device");
  CHECK_EQ(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_INVALID_PARAM);  // flags must be 0
  CHECK_EQ(aclrtDeviceEnablePeerAccess(99, 0), ACL_ERROR_INVALID_DEVICE);

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
  CHECK_EQ(aclrtMemcpy(b.get(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_FAILURE);
  CHECK_EQ(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("not enabled");
  CHECK_EQ(stat("peer_copies"), 2);
}

TEST(memcpy_async_needs_a_stream_of_the_data_device) {
  setDevice(2);
  aclrtStream s2 = nullptr, s0 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtCreateStream(&s0), ACL_SUCCESS);
  DeviceMem a(0, 16);
  std::vector<int32_t> in = {1, 2, 3, 4};
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s2), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "stream belongs to device 2", "dst on device 0");
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s0), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s0), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("not a live stream");
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtMemcpyAsync(a.get(), 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
}

TEST(memset_fills_device_memory) {
  DeviceMem a(1, 16);
  CHECK_EQ(aclrtMemset(a.get(), 16, 0xAB, 16), ACL_SUCCESS);
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 0xAB)));
  CHECK_EQ(aclrtMemset(a.get(), 8, 0, 16), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtMemset(static_cast<char*>(a.get()) + 8, 16, 0, 16), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemset", "overrun");
  CHECK_EQ(aclrtMemset(out.data(), 16, 0, 16), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("not device memory");
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
  CHECK_EQ(add(a, b, 1.5f, c), ACLNN_ERR_INNER);  // ATen, like CANN, refuses a float alpha for ints
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
  CHECK_EQ(std::string(aclGetRecentErrMsg()),
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
    message = aclGetRecentErrMsg();
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
  CHECK_EQ(std::string(aclGetRecentErrMsg()), "aclnnAdd: argument 'self' is nullptr");
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

TEST(kernel_errors_become_inner_errors) {
  setDevice(0);
  DevTensor self(0, {2, 3}), other(0, {4}), out(0, {2, 3});
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
  CHECK_ERR_HAS("aclnnAdd: kernel failed", "size");
  CHECK(std::string(aclGetRecentErrMsg()).find("Exception raised from") == std::string::npos);
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
    CHECK_EQ(std::string(aclGetRecentErrMsg()), "aclnnAdd: injected fault at phase 1");
    CHECK(e == nullptr);
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);  // count 1: used up

    fsimInjectFault("aclnnAdd", 2, 2);
    out.write<float>({0, 0, 0});
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
    CHECK_EQ(std::string(aclGetRecentErrMsg()), "aclnnAdd: injected fault at phase 2");
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
    fsimInjectFault("aclnnAdd", 3, 1);
    CHECK_ERR_HAS("fsimInjectFault", "phase 3");
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

// ---- environment cases (run by test_sim_runtime.py with FLAGOS_SIM_* set) -----

ENV_TEST(env_invalid_devices) {
  const char* env = std::getenv("FLAGOS_SIM_DEVICES");
  CHECK(env != nullptr);
  const std::string value = env;
  CHECK_EQ(fsimDeviceCount(), -1);
  CHECK_ERR_HAS("fsimDeviceCount", "FLAGOS_SIM_DEVICES='" + value + "'", "1..16");
  uint32_t n = 0;
  CHECK_EQ(aclrtGetDeviceCount(&n), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtGetDeviceCount", "FLAGOS_SIM_DEVICES='" + value + "'");
  std::printf("MESSAGE %s\n", aclGetRecentErrMsg());
  CHECK(aclrtSetDevice(0) != ACL_SUCCESS);
  CHECK_ERR_HAS("aclrtSetDevice", "FLAGOS_SIM_DEVICES");
  std::printf("STATS %s\n", fsimStatsJson());
}

ENV_TEST(env_two_devices) {
  CHECK_EQ(fsimDeviceCount(), 2);
  setDevice(1);
  CHECK_EQ(aclrtSetDevice(2), ACL_ERROR_INVALID_DEVICE);
  CHECK_ERR_HAS("device 2", "0..1");
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
  std::printf("MESSAGE %s\n", aclGetRecentErrMsg());
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
  std::printf("MESSAGE %s\n", aclGetRecentErrMsg());
  fsimSetMismatchMode(FSIM_MISMATCH_ERROR);  // an explicit choice overrides the variable
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
}

// FLAGOS_SIM_FAULT="aclnnAdd:2,aclnnCast:1:3"
ENV_TEST(env_faults) {
  setDevice(0);
  DevTensor self(0, {2}), other(0, {2}), out(0, {2});
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
  CHECK_EQ(std::string(aclGetRecentErrMsg()), "aclnnAdd: injected fault at phase 2");
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT, out.get(), &ws, &e), ACLNN_ERR_INNER);
    CHECK_EQ(std::string(aclGetRecentErrMsg()), "aclnnCast: injected fault at phase 1");
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
  std::printf("MESSAGE %s\n", aclGetRecentErrMsg());
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
    if (!c->env) {  // default cases leave no faults or modes behind
      fsimClearFaults();
      fsimSetMismatchMode(FSIM_MISMATCH_ERROR);
    }
  }
  std::printf("%zu passed, %d failed\n", selected.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}
