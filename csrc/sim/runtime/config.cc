// Environment configuration, error messages, devices (current device and
// reference counts), mismatch mode and fault injection. Each variable is read
// once, on first use; an invalid value is remembered and reported by every
// call that depends on it, never ignored.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "runtime.h"

namespace fsim {
namespace {

// The calling thread's error message, kept until aclGetRecentErrMsg reads it.
thread_local std::string tPendingError;
thread_local bool tHasPendingError = false;
// What aclGetRecentErrMsg returned last: valid until its next call.
thread_local std::string tReturnedError;

std::optional<int> parseInt(std::string_view s) {
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

struct DeviceConfig {
  int count = 4;  // the devices this process sees
  int physical = 4;  // the machine's devices (FLAGOS_SIM_DEVICES)
  std::string error;  // non-empty: FLAGOS_SIM_DEVICES or ASCEND_RT_VISIBLE_DEVICES is invalid
};

// ASCEND_RT_VISIBLE_DEVICES, read as CANN's runtime reads it
// (hicann/runtime src/runtime/core/src/runtime.cc, Runtime::GetVisibleDevices
// and SplitString): device ids separated by single commas, read up to the
// first other character, empty field or id the machine does not have; they
// must ascend and not repeat, and at least one must be read. Otherwise the
// process sees no device (aclrtGetDeviceCount: ACL_ERROR_RT_NO_DEVICE,
// src/runtime/api/impl/api_impl.cc). The process's devices are numbered
// 0..n-1 in the order given.
std::optional<std::string> applyVisibleDevices(const char* env, DeviceConfig& c) {
  std::vector<int> ids;
  std::string_view text = env;
  size_t at = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
    size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    std::optional<int> id = end - at <= 9 ? parseInt(std::string(text.substr(at, end - at))) : std::nullopt;
    if (!id || *id > c.physical - 1) break;  // an id the machine does not have ends the list
    if (!ids.empty() && *id < ids.back())
      return cat("ASCEND_RT_VISIBLE_DEVICES='", env, "': the devices must be configured in ascending order");
    if (std::find(ids.begin(), ids.end(), *id) != ids.end())
      return cat("ASCEND_RT_VISIBLE_DEVICES='", env, "': the devices cannot be duplicated");
    ids.push_back(*id);
    if (end >= text.size() || text[end] != ',') break;
    at = end + 1;
  }
  if (ids.empty())
    return cat("ASCEND_RT_VISIBLE_DEVICES='", env, "' names no device in [0, ", c.physical, ")");
  c.count = static_cast<int>(ids.size());
  return std::nullopt;
}

// Configuration objects are leaked on purpose: threads still running during
// exit may use them after static destructors ran.
const DeviceConfig& deviceConfig() {
  static const DeviceConfig* config = new DeviceConfig([] {
    DeviceConfig c;
    if (const char* env = std::getenv("FLAGOS_SIM_DEVICES")) {
      std::optional<int> n = parseInt(env);
      if (n && *n >= 1 && *n <= kMaxDevices) {
        c.count = c.physical = *n;
      } else {
        c.count = -1;
        c.error = cat("FLAGOS_SIM_DEVICES='", env, "' is not an integer in 1..", kMaxDevices);
        return c;
      }
    }
    if (const char* env = std::getenv("ASCEND_RT_VISIBLE_DEVICES")) {
      if (std::optional<std::string> error = applyVisibleDevices(env, c)) {
        c.count = -1;
        c.error = *error;
      }
    }
    return c;
  }());
  return *config;
}

struct ProtectConfig {
  bool on = false;
  std::string error;
};

const ProtectConfig& protectConfig() {
  static const ProtectConfig* config = new ProtectConfig([] {
    ProtectConfig c;
    if (const char* env = std::getenv("FLAGOS_SIM_PROTECT")) {
      std::string_view v = env;
      if (v == "1") {
        c.on = true;
      } else if (v != "0") {
        c.error = cat("FLAGOS_SIM_PROTECT='", env, "' must be 0 or 1");
      }
    }
    return c;
  }());
  return *config;
}

// Upper bound of FLAGOS_SIM_DEVICE_MEMORY.
constexpr uint64_t kMaxDeviceMemory = uint64_t{1} << 40;

struct MemoryConfig {
  uint64_t bytes = uint64_t{16} << 30;  // 16 GiB per device
  std::string error;
};

// A byte count with an optional binary suffix: "17179869184", "16G", "512M".
std::optional<uint64_t> parseBytes(std::string_view s) {
  uint64_t scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K': scale = uint64_t{1} << 10; break;
      case 'M': scale = uint64_t{1} << 20; break;
      case 'G': scale = uint64_t{1} << 30; break;
      case 'T': scale = uint64_t{1} << 40; break;
      default: break;
    }
    if (scale != 1) s.remove_suffix(1);
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value == 0 || value > kMaxDeviceMemory / scale)
    return std::nullopt;
  return value * scale;
}

const MemoryConfig& memoryConfig() {
  static const MemoryConfig* config = new MemoryConfig([] {
    MemoryConfig c;
    if (const char* env = std::getenv("FLAGOS_SIM_DEVICE_MEMORY")) {
      if (std::optional<uint64_t> bytes = parseBytes(env)) {
        c.bytes = *bytes;
      } else {
        c.error = cat("FLAGOS_SIM_DEVICE_MEMORY='", env,
                      "' is not a byte count from 1 to 1T (digits, optionally followed by K, M, G or T)");
      }
    }
    return c;
  }());
  return *config;
}

// The mode starts from FLAGOS_SIM_ON_MISMATCH; fsimSetMismatchMode overrides
// it (an invalid variable included).
struct MismatchConfig {
  std::atomic<int> mode{FSIM_MISMATCH_ERROR};
  std::atomic<bool> envInvalid{false};
  std::string envError;  // written once, before any reader can see envInvalid
  MismatchConfig() {
    if (const char* env = std::getenv("FLAGOS_SIM_ON_MISMATCH")) {
      std::string_view v = env;
      if (v == "nan") {
        mode = FSIM_MISMATCH_NAN;
      } else if (v != "error") {
        envError = cat("FLAGOS_SIM_ON_MISMATCH='", env, "' must be 'error' or 'nan'");
        envInvalid = true;
      }
    }
  }
};

MismatchConfig& mismatchConfig() {
  static MismatchConfig* config = new MismatchConfig;
  return *config;
}

// Lenient kernels (fsimSetLenient): from FLAGOS_SIM_LENIENT, "0" or "1".
std::atomic<bool>& lenientFlag() {
  static std::atomic<bool>* flag = [] {
    const char* env = std::getenv("FLAGOS_SIM_LENIENT");
    return new std::atomic<bool>(env != nullptr && std::string_view(env) == "1");
  }();
  return *flag;
}

// Pending injected faults: (op, phase) -> remaining count.
struct Faults {
  std::mutex mutex;
  std::map<std::pair<std::string, int>, int> remaining;
  std::string envError;            // non-empty: FLAGOS_SIM_FAULT is invalid
  std::atomic<bool> active{false};  // fast path: nothing to check

  Faults() {
    const char* env = std::getenv("FLAGOS_SIM_FAULT");
    if (env == nullptr) return;
    std::string_view all = env;
    while (!all.empty()) {
      size_t comma = all.find(',');
      std::string_view entry = all.substr(0, comma);
      all = comma == std::string_view::npos ? std::string_view() : all.substr(comma + 1);
      if (!addEntry(entry)) {
        envError = cat("FLAGOS_SIM_FAULT='", env, "' is invalid: entry '", entry,
                       "' is not op:phase[:count] with phase 1, 2 or 3 and count >= 1");
        remaining.clear();
        break;
      }
    }
    active = !remaining.empty() || !envError.empty();
  }

  bool addEntry(std::string_view entry) {
    size_t c1 = entry.find(':');
    if (c1 == 0 || c1 == std::string_view::npos) return false;
    std::string_view op = entry.substr(0, c1);
    std::string_view rest = entry.substr(c1 + 1);
    size_t c2 = rest.find(':');
    std::optional<int> phase = parseInt(rest.substr(0, c2));
    std::optional<int> count = c2 == std::string_view::npos ? 1 : parseInt(rest.substr(c2 + 1));
    if (!phase || *phase < 1 || *phase > 3 || !count || *count < 1) return false;
    remaining[{std::string(op), *phase}] += *count;
    return true;
  }
};

Faults& faults() {
  static Faults* f = new Faults;
  return *f;
}

// Devices are shared by the process, like CANN's primary contexts: every
// aclrtSetDevice takes a reference on its device, every aclrtResetDevice
// drops one, and the device is torn down when none is left. A teardown bumps
// the device's generation, which invalidates every thread's claim to it.
struct DeviceState {
  std::mutex mutex;
  std::array<uint64_t, kMaxDevices> refs{};
  std::array<std::atomic<uint64_t>, kMaxDevices> generation{};
};

DeviceState& deviceState() {
  static DeviceState* state = new DeviceState;  // leaked: threads may use it during exit
  return *state;
}

// The calling thread's current device and the device's generation when it
// was set (a reset bumps it). One object: a launch reads both, and each
// thread_local of a shared library is its own __tls_get_addr call.
struct ThreadDevice {
  int device = -1;
  uint64_t generation = 0;
};
thread_local ThreadDevice tCurrent;

// Requires the device mutex. Releases the device's streams, and the calling
// thread loses its current device whatever it was, as in CANN.
void tearDown(DeviceState& state, int device) {
  state.refs[device] = 0;
  state.generation[device]++;
  releaseDeviceStreams(device);
  tCurrent.device = -1;
}

// The simulated SoC: an Ascend 910B3 (CANN's platform_config/Ascend910B3.ini),
// except for its memory, which FLAGOS_SIM_DEVICE_MEMORY sets.
constexpr const char* kSocName = "Ascend910B3";
constexpr int64_t kAiCoreCount = 20;
constexpr int64_t kCubeCoreCount = 20;
constexpr int64_t kVectorCoreCount = 40;
constexpr int64_t kL2CacheBytes = 192LL << 20;

}  // namespace

void setError(std::string message) {
  tPendingError = std::move(message);
  tHasPendingError = true;
}

int deviceCount(const char* fn) {
  const DeviceConfig& c = deviceConfig();
  if (c.count < 0) setError(cat(fn, ": ", c.error));
  return c.count;
}

// Like CANN with an invalid ASCEND_RT_VISIBLE_DEVICES, an invalid device
// count means no device at all.
aclError checkDevice(const char* fn, int32_t id) {
  int n = deviceCount(fn);
  if (n < 0) return ACL_ERROR_RT_NO_DEVICE;
  if (id < 0 || id >= n)
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, fn, ": device ", id, " is out of range; valid devices are 0..",
                n - 1, " (", n, " visible: FLAGOS_SIM_DEVICES, ASCEND_RT_VISIBLE_DEVICES)");
  return ACL_SUCCESS;
}

int currentDevice() {
  ThreadDevice& current = tCurrent;
  if (current.device >= 0 && deviceState().generation[current.device].load() != current.generation) current.device = -1;
  return current.device;
}

aclError requireCurrentDevice(const char* fn, int* device) {
  if (currentDevice() < 0)
    return fail(ACL_ERROR_RT_CONTEXT_NULL, fn,
                ": the calling thread has no current device (call aclrtSetDevice first)");
  *device = tCurrent.device;
  return ACL_SUCCESS;
}

std::optional<uint64_t> deviceMemory(const char* fn) {
  const MemoryConfig& c = memoryConfig();
  if (!c.error.empty()) {
    setError(cat(fn, ": ", c.error));
    return std::nullopt;
  }
  return c.bytes;
}

std::optional<bool> protectMode(const char* fn) {
  const ProtectConfig& c = protectConfig();
  if (!c.error.empty()) {
    setError(cat(fn, ": ", c.error));
    return std::nullopt;
  }
  return c.on;
}

bool lenientKernels() { return lenientFlag().load(std::memory_order_relaxed); }

std::optional<fsimMismatchMode> mismatchMode(const char* op) {
  MismatchConfig& c = mismatchConfig();
  if (c.envInvalid) {
    setError(cat(op, ": ", c.envError));
    return std::nullopt;
  }
  return static_cast<fsimMismatchMode>(c.mode.load());
}

aclnnStatus checkFault(const char* op, int phase) {
  Faults& f = faults();
  if (!f.active) return ACLNN_SUCCESS;
  if (!f.envError.empty()) return fail(ACLNN_ERR_PARAM_INVALID, op, ": ", f.envError);
  if (!takeFault(op, phase)) return ACLNN_SUCCESS;
  return fail(ACLNN_ERR_INNER, op, ": injected fault at phase ", phase);
}

bool takeFault(const char* op, int phase) {
  Faults& f = faults();
  if (!f.active) return false;
  std::lock_guard lock(f.mutex);
  auto it = f.remaining.find({op, phase});
  if (it == f.remaining.end()) return false;
  if (--it->second == 0) f.remaining.erase(it);
  f.active = !f.remaining.empty() || !f.envError.empty();
  return true;
}

size_t dtypeSize(aclDataType dtype) {
  switch (dtype) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
      return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

const char* dtypeName(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT: return "ACL_FLOAT";
    case ACL_FLOAT16: return "ACL_FLOAT16";
    case ACL_INT8: return "ACL_INT8";
    case ACL_INT32: return "ACL_INT32";
    case ACL_UINT8: return "ACL_UINT8";
    case ACL_INT16: return "ACL_INT16";
    case ACL_UINT16: return "ACL_UINT16";
    case ACL_UINT32: return "ACL_UINT32";
    case ACL_INT64: return "ACL_INT64";
    case ACL_UINT64: return "ACL_UINT64";
    case ACL_DOUBLE: return "ACL_DOUBLE";
    case ACL_BOOL: return "ACL_BOOL";
    case ACL_COMPLEX64: return "ACL_COMPLEX64";
    case ACL_COMPLEX128: return "ACL_COMPLEX128";
    case ACL_BF16: return "ACL_BF16";
    case ACL_COMPLEX32: return "ACL_COMPLEX32";
    case ACL_HIFLOAT8: return "ACL_HIFLOAT8";
    case ACL_FLOAT8_E5M2: return "ACL_FLOAT8_E5M2";
    case ACL_FLOAT8_E4M3FN: return "ACL_FLOAT8_E4M3FN";
    default: return "an unknown aclDataType";
  }
}

}  // namespace fsim

using namespace fsim;

extern "C" {

// Per thread: returns the message of the thread's latest failed call and
// clears it; nullptr when there is none (or it was read already).
const char* aclGetRecentErrMsg(void) {
  if (!tHasPendingError) return nullptr;
  tReturnedError = std::move(tPendingError);
  tPendingError.clear();
  tHasPendingError = false;
  return tReturnedError.c_str();
}

int32_t fsimDeviceCount(void) { return deviceCount("fsimDeviceCount"); }

void fsimSetMismatchMode(fsimMismatchMode mode) {
  if (mode != FSIM_MISMATCH_ERROR && mode != FSIM_MISMATCH_NAN) {
    setError(cat("fsimSetMismatchMode: ", static_cast<int>(mode), " is not a fsimMismatchMode"));
    return;
  }
  MismatchConfig& c = mismatchConfig();
  c.mode = mode;
  c.envInvalid = false;
}

fsimMismatchMode fsimGetMismatchMode(void) {
  return static_cast<fsimMismatchMode>(mismatchConfig().mode.load());
}

void fsimSetLenient(int32_t on) { lenientFlag() = on != 0; }

int32_t fsimGetLenient(void) { return lenientFlag() ? 1 : 0; }

void fsimInjectFault(const char* op, int32_t phase, int32_t count) {
  if (op == nullptr || *op == '\0' || phase < 1 || phase > 3 || count < 0) {
    setError(cat("fsimInjectFault: invalid request (op '", op ? op : "(null)", "', phase ", phase,
                 ", count ", count, "); need a name, phase 1, 2 or 3 and count >= 0"));
    return;
  }
  Faults& f = faults();
  std::lock_guard lock(f.mutex);
  if (count == 0)
    f.remaining.erase({op, phase});
  else
    f.remaining[{op, phase}] = count;
  f.active = !f.remaining.empty() || !f.envError.empty();
}

void fsimClearFaults(void) {
  Faults& f = faults();
  std::lock_guard lock(f.mutex);
  f.remaining.clear();
  f.active = !f.envError.empty();
}

aclError aclInit(const char*) { return ACL_SUCCESS; }
aclError aclFinalize(void) { return ACL_SUCCESS; }

aclError aclrtSetDevice(int32_t deviceId) {
  counters().setDeviceCalls++;
  if (aclError e = checkDevice("aclrtSetDevice", deviceId)) return e;
  DeviceState& state = deviceState();
  std::lock_guard lock(state.mutex);
  state.refs[deviceId]++;
  tCurrent.device = deviceId;
  tCurrent.generation = state.generation[deviceId].load();
  return ACL_SUCCESS;
}

// CANN's "no current device" is a normal state for aclrtGetDevice: it
// returns ACL_ERROR_RT_CONTEXT_NULL without reporting an error message.
aclError aclrtGetDevice(int32_t* deviceId) {
  if (deviceId == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is nullptr");
  const int device = currentDevice();
  if (device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  *deviceId = device;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  if (count == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is nullptr");
  int n = deviceCount("aclrtGetDeviceCount");
  if (n < 0) return ACL_ERROR_RT_NO_DEVICE;
  *count = static_cast<uint32_t>(n);
  return ACL_SUCCESS;
}

// Drops one reference; the last one tears the device down (its streams) and
// leaves the calling thread without a current device. Allocations and
// events stay valid.
aclError aclrtResetDevice(int32_t deviceId) {
  const char* fn = "aclrtResetDevice";
  if (aclError e = checkDevice(fn, deviceId)) return e;
  DeviceState& state = deviceState();
  std::lock_guard lock(state.mutex);
  if (state.refs[deviceId] == 0)
    return fail(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, fn, ": device ", deviceId,
                " has not been set, or has been reset as many times as it was set");
  if (--state.refs[deviceId] == 0) tearDown(state, deviceId);
  return ACL_SUCCESS;
}

// Drops every reference at once.
aclError aclrtResetDeviceForce(int32_t deviceId) {
  const char* fn = "aclrtResetDeviceForce";
  if (aclError e = checkDevice(fn, deviceId)) return e;
  DeviceState& state = deviceState();
  std::lock_guard lock(state.mutex);
  if (state.refs[deviceId] == 0)
    return fail(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, fn, ": device ", deviceId,
                " has not been set, or has been reset already");
  tearDown(state, deviceId);
  return ACL_SUCCESS;
}

// Needs no current device. Attributes the simulator does not model fail
// like attributes CANN does not know.
aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t* value) {
  const char* fn = "aclrtGetDeviceInfo";
  if (value == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": value is nullptr");
  const int n = deviceCount(fn);
  if (n < 0) return ACL_ERROR_RT_NO_DEVICE;
  if (deviceId >= static_cast<uint32_t>(n))
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": device ", deviceId, " is out of range; valid devices are 0..",
                n - 1);
  switch (attr) {
    case ACL_DEV_ATTR_AICORE_CORE_NUM: *value = kAiCoreCount; return ACL_SUCCESS;
    case ACL_DEV_ATTR_CUBE_CORE_NUM: *value = kCubeCoreCount; return ACL_SUCCESS;
    case ACL_DEV_ATTR_VECTOR_CORE_NUM: *value = kVectorCoreCount; return ACL_SUCCESS;
    case ACL_DEV_ATTR_L2_CACHE_SIZE: *value = kL2CacheBytes; return ACL_SUCCESS;
    case ACL_DEV_ATTR_PHY_CHIP_ID: *value = deviceId; return ACL_SUCCESS;
    case ACL_DEV_ATTR_IS_VIRTUAL: *value = 0; return ACL_SUCCESS;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: {
      std::optional<uint64_t> bytes = deviceMemory(fn);
      if (!bytes) return ACL_ERROR_INVALID_PARAM;
      *value = static_cast<int64_t>(*bytes);
      return ACL_SUCCESS;
    }
    default:
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": attr ", static_cast<int>(attr),
                  " is not an aclrtDevAttr the simulator answers (AICORE_CORE_NUM, CUBE_CORE_NUM, VECTOR_CORE_NUM, "
                  "TOTAL_GLOBAL_MEM_SIZE, L2_CACHE_SIZE, PHY_CHIP_ID, IS_VIRTUAL)");
  }
}

const char* aclrtGetSocName(void) { return kSocName; }

}  // extern "C"
