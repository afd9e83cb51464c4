// The simulator tests' harness: cases that register themselves, checks that
// throw with the file, line and the runtime's last error message, and the
// helpers the cases share (device memory and tensors, a synchronized launch).
// Cases live in tests/sim/sim_<concept>.cc; sim_main.cc runs them.
//
// The cases are ordinary functions; a failed CHECK throws a Failure, which
// the runner reports as the case's failure before it runs the next one.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flagos/aclnn/aclnnAdd.h"
#include "flagos_sim.h"

namespace fsim_test {

// ---- mini framework ---------------------------------------------------------

struct Failure {
  std::string what;
};

struct Case {
  const char* name;
  void (*fn)();
  bool env;
};

inline std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

struct Register {
  Register(const char* name, void (*fn)(), bool env) { cases().push_back({name, fn, env}); }
};

// A case: a function that registers itself under its name. Each file defines
// its cases in an anonymous namespace; `--list` and a name find them all.
#define CASE(name, env)                                       \
  void name();                                                \
  const ::fsim_test::Register register_##name(#name, name, env); \
  void name()
#define TEST(name) CASE(name, false)
#define ENV_TEST(name) CASE(name, true)

template <class... Args>
inline std::string cat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}

// The calling thread's latest error message. aclGetRecentErrMsg() clears
// what it returns (and returns nullptr when there is nothing new), so the
// cases read messages through this, which keeps the last one it saw.
inline const std::string& lastError() {
  thread_local std::string last;
  if (const char* message = aclGetRecentErrMsg()) last = message;
  return last;
}

[[noreturn]] inline void failAt(const char* file, int line, const std::string& what) {
  throw Failure{cat(file, ":", line, ": ", what, "\n    last error message: '", lastError(), "'")};
}

#define CHECK(cond) \
  do {              \
    if (!(cond)) ::fsim_test::failAt(__FILE__, __LINE__, "CHECK(" #cond ") failed"); \
  } while (0)

#define CHECK_EQ(a, b)                                                                          \
  do {                                                                                          \
    const auto va_ = (a);                                                                       \
    const auto vb_ = (b);                                                                       \
    if (!(va_ == vb_)) ::fsim_test::failAt(__FILE__, __LINE__, ::fsim_test::cat("CHECK_EQ(" #a ", " #b "): ", va_, " != ", vb_)); \
  } while (0)

// The calling thread's last error message contains every given piece.
#define CHECK_ERR_HAS(...)                                                                    \
  do {                                                                                        \
    const std::string& msg_ = ::fsim_test::lastError();                                                    \
    for (const std::string& piece : std::initializer_list<std::string>{__VA_ARGS__})           \
      if (msg_.find(piece) == std::string::npos)                                              \
        ::fsim_test::failAt(__FILE__, __LINE__, ::fsim_test::cat("error message lacks '", piece, "'"));                 \
  } while (0)

// ---- helpers ------------------------------------------------------------------

inline int expectedDevices() {
  const char* env = std::getenv("FLAGOS_SIM_DEVICES");
  return env ? std::atoi(env) : 4;
}

inline void setDevice(int device) { CHECK_EQ(aclrtSetDevice(device), ACL_SUCCESS); }

// Drops every reference on `device` (references are process-wide), so that a
// case starts from a device nobody set. The calling thread then has no
// current device.
inline void releaseDevice(int device) {
  const aclError rc = aclrtResetDeviceForce(device);
  CHECK(rc == ACL_SUCCESS || rc == ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
  lastError();  // consumes the message of a device that had no reference
}

// A number from fsimStatsJson(): top-level `key`, or `key` -> `sub`.
inline int64_t stat(const std::string& key, const std::string& sub = "") {
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

inline size_t elementSize(aclDataType dtype) {
  switch (dtype) {
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: return 2;
    case ACL_FLOAT: case ACL_INT32: return 4;
    default: return 8;
  }
}

inline std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& dims) {
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
inline ScalarPtr floatScalar(float value) { return {aclCreateScalar(&value, ACL_FLOAT), &aclDestroyScalar}; }

using Phase2 = aclnnStatus (*)(void*, uint64_t, aclOpExecutor*, aclrtStream);

// Phase 2 with a fresh workspace on `workspaceDevice` (-1: the current
// device), then a synchronization of the stream, so that the kernel has run
// (and the workspace may be freed) when this returns: the phase-2 status if
// the launch failed, else the synchronization's (a kernel that failed when it
// ran: ACL_ERROR_RT_AICORE_EXCEPTION). The async cases below call phase 2
// themselves.
inline int32_t launch(Phase2 phase2, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream = nullptr,
               int workspaceDevice = -1) {
  if (workspaceDevice < 0) CHECK_EQ(aclrtGetDevice(&workspaceDevice), ACL_SUCCESS);
  DeviceMem workspace(workspaceDevice, workspaceSize);
  const aclnnStatus status = phase2(workspace.get(), workspaceSize, executor, stream);
  if (status != ACLNN_SUCCESS) return status;
  return aclrtSynchronizeStream(stream);
}

// aclnnAdd(self, other, alpha, out) on the current device, synchronized.
inline int32_t add(const DevTensor& self, const DevTensor& other, const aclScalar* alpha, const DevTensor& out,
            aclrtStream stream = nullptr, int workspaceDevice = -1) {
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), alpha, out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK(ws > 0);
  return launch(aclnnAdd, ws, e, stream, workspaceDevice);
}
inline int32_t add(const DevTensor& self, const DevTensor& other, float alpha, const DevTensor& out,
            aclrtStream stream = nullptr, int workspaceDevice = -1) {
  return add(self, other, floatScalar(alpha).get(), out, stream, workspaceDevice);
}

template <class T>
inline std::string str(const std::vector<T>& v) {
  std::string s = "[";
  for (const T& x : v) s += cat(s.size() > 1 ? ", " : "", +x);
  return s + "]";
}
#define CHECK_VALUES(actual, ...) CHECK_EQ(::fsim_test::str(actual), ::fsim_test::str(decltype(actual){__VA_ARGS__}))

// Runs `fn` on a new thread that never called aclrtSetDevice.
inline void onFreshThread(const std::function<void()>& fn) { std::thread(fn).join(); }

// Restores the error mismatch mode when a case ends, even by failure.
struct NanMode {
  NanMode() { fsimSetMismatchMode(FSIM_MISMATCH_NAN); }
  ~NanMode() { fsimSetMismatchMode(FSIM_MISMATCH_ERROR); }
};

// The status aclrtStreamQuery reports for `stream`.
inline aclrtStreamStatus queryStream(aclrtStream stream) {
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  CHECK_EQ(aclrtStreamQuery(stream, &status), ACL_SUCCESS);
  return status;
}

}  // namespace fsim_test
