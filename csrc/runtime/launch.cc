#include "runtime/acl_check.h"
#include "runtime/launch.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/executor_cache.h"
#include "runtime/stream.h"

namespace flagos {

// ---- switches ------------------------------------------------------------

namespace {

bool env_flag(const char* name, bool fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    return fallback;
  }
  return std::strcmp(value, "0") != 0;
}

std::atomic<bool> device_check{env_flag("FLAGOS_DEVICE_CHECK", false)};

}  // namespace

void set_device_check_enabled(bool enabled) { device_check.store(enabled); }
bool device_check_enabled() { return device_check.load(std::memory_order_relaxed); }

// ---- the launch ------------------------------------------------------------

namespace {

void check_devices(const LaunchRecord& record, c10::DeviceIndex device) {
  for (const auto* tensors : {&record.inputs(), &record.outputs()}) {
    for (const TensorAddress& t : *tensors) {
      if (t.data == nullptr) continue;  // an empty tensor has no storage
      const auto owner = device_of_pointer(t.data);
      TORCH_CHECK(owner.has_value(), "flagos device check: ", record.api(), ": argument ",
                  record.arg_name(t.position), " is not flagos device memory");
      TORCH_CHECK(*owner == device, "flagos device check: ", record.api(), ": argument ",
                  record.arg_name(t.position), " lives on flagos:", static_cast<int>(*owner),
                  " but the launch runs on flagos:", static_cast<int>(device));
    }
  }
}

// Destroys a phase-1 executor that will never reach phase 2 (phase 2 of a
// non-repeatable executor destroys it).
struct UnlaunchedExecutor {
  aclOpExecutor* executor = nullptr;
  ~UnlaunchedExecutor() {
    if (executor != nullptr) aclDestroyAclOpExecutor(executor);
  }
};

}  // namespace

void run_launch(const LaunchRecord& record, c10::DeviceIndex device, const void* entry, PhaseOneCall phase_one,
                PhaseTwoFn phase_two) {
  check_not_forked();
  if (device_check_enabled()) {
    check_devices(record, device);
  }
  aclrtStream stream = acl_stream(current_stream(device));

  const bool use_cache = executor_cache_enabled();
  ExecutorCache& cache = thread_executor_cache();
  uint64_t hash = 0;
  aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  bool cached = false;
  std::unique_ptr<BoundArgs> bound;  // a miss's objects, until phase 2 has run or the cache keeps them
  UnlaunchedExecutor unlaunched;
  if (use_cache) {
    const phases::Span cache_span(phases::kCache);
    hash = hash_key(device, stream, entry, record.signature());
    if (CachedExecutor* hit = cache.find(hash, device, stream, entry, record.signature())) {
      detail::cache_counters(device).hits.fetch_add(1, std::memory_order_relaxed);
      executor = hit->executor;
      workspace_size = hit->workspace_size;
      cached = true;
      rebind(*hit, record);
    } else {
      count_executor_cache_miss(device, record.api());
    }
  }
  if (executor == nullptr) {
    const phases::Span phase_one_span(phases::kPhaseOne);
    bound = std::make_unique<BoundArgs>(record);
    const aclnnStatus status = phase_one(*bound, &workspace_size, &executor);
    if (status == kAclnnErrParamInvalid && (record.uncommon_dtype() || record.max_dims() > 8)) {
      const std::string tag = record.uncommon_dtype() ? std::string(c10::toString(*record.uncommon_dtype()))
                                                      : c10::str(record.max_dims(), " dims");
      throw DtypeUnsupported(record.api(), tag,
                             c10::str("flagos: ", record.api(), " rejected its arguments (status ", status,
                                      ") with a ", tag, " argument: ", recent_error_message()));
    }
    TORCH_CHECK(status == kAclnnSuccess, "flagos: ", record.api(), " failed at phase 1 (", record.api(),
                "GetWorkspaceSize) on flagos:", static_cast<int>(device), " with status ", status, ": ",
                recent_error_message());
    if (use_cache && aclSetAclOpExecutorRepeatable(executor) == kAclnnSuccess) {
      bound->detach();
      cache.insert(CachedExecutor{hash, device, stream, entry,
                                               std::vector<uint8_t>(record.signature().begin(),
                                                                    record.signature().end()),
                                               executor, workspace_size, std::move(bound),
                                               addresses_of(record)});
      cached = true;
    } else {
      unlaunched.executor = executor;
    }
  }

  // The workspace lives on the launch device: the launch stream's block.
  void* workspace = workspace_size > 0 ? thread_workspace(device, stream, workspace_size) : nullptr;
  unlaunched.executor = nullptr;  // phase 2 consumes a non-repeatable executor, whatever its outcome
  aclnnStatus status;
  {
    const phases::Span phase_two_span(phases::kPhaseTwo);
    status = phase_two(workspace, workspace_size, executor, stream);
  }
  if (status != kAclnnSuccess) {
    const std::string message = recent_error_message();
    if (cached) cache.erase(hash);
    TORCH_CHECK(false, "flagos: ", record.api(), " failed at phase 2 (launch) on flagos:", static_cast<int>(device),
                " with status ", status, ": ", message);
  }
}

}  // namespace flagos
