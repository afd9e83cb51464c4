// The device side of torch.profiler for flagos (docs/profiler.md).
//
// Why a Kineto plugin: torch.profiler collects device events through Kineto,
// and PyTorch 2.13 lets a PrivateUse1 backend add a Kineto activity profiler
// (PrivateUse1ProfilerRegistry). Its events then reach key_averages() (the
// device time columns, each kernel tied to the op that launched it) and
// export_chrome_trace() like CUDA's. The legacy hooks of
// torch/csrc/profiler/stubs (registerPrivateUse1Methods) only time events the
// host records around an op; PyTorch uses them only when Kineto lacks the
// PrivateUse1 activity, which this CPU wheel has.
//
// The records come from the runtime: the simulator's launch records
// (fsimRecordLaunches in flagos_sim.h). A CANN build has no plugin yet; its
// records would come from msprof task time through acl_prof.h.
#if !defined(FLAGOS_WITH_CANN)

#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <output_base.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flagos_sim.h"
#include "runtime/profiler.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

using libkineto::ActivityType;

std::atomic<bool> plugin_enabled{true};

// Puts the device tracks below the host's in trace viewers, as Kineto
// places its GPU tracks.
constexpr int64_t kDeviceSortIndex = 1000000;

ActivityType activity_type(int32_t kind) {
  switch (kind) {
    case FSIM_RECORD_MEMCPY:
      return ActivityType::GPU_MEMCPY;
    case FSIM_RECORD_MEMSET:
      return ActivityType::GPU_MEMSET;
    default:
      return ActivityType::CONCURRENT_KERNEL;
  }
}

std::string device_name(int64_t device) { return "flagos:" + std::to_string(device); }

std::string stream_name(int64_t stream) {
  return stream < 0 ? std::string("stream (not the backend's)") : "stream " + std::to_string(stream);
}

class DeviceSession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    fsimRecordLaunches(1);
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    fsimRecordLaunches(0);
    // Work queued while recording finishes before it is read, as Kineto
    // synchronizes CUDA devices when a trace stops.
    fsimDrainStreams();
    std::vector<fsimLaunchRecord> chunk(4096);
    while (size_t n = fsimTakeLaunchRecords(chunk.data(), chunk.size())) {
      records_.insert(records_.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
    }
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return {}; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, nullptr, 0, INT64_MAX);
  }

  // One activity per record, on track (device, stream); `linked` ties it to
  // the host op that was innermost when it was queued. No record is dropped
  // for ending after the capture window: all were queued inside it, and the
  // last ones may run after the host stopped the trace.
  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked_activity,
                    int64_t start_time, int64_t end_time) override {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start_time, end_time, "flagos");
    buffer_->gpuOpCount = -1;
    for (const fsimLaunchRecord& r : records_) {
      const int64_t stream = stream_id_of(static_cast<c10::DeviceIndex>(r.device), r.stream);
      tracks_[r.device].insert(stream);
      buffer_->emplace_activity(buffer_->span, activity_type(r.kind), r.name);
      libkineto::GenericTraceActivity& a = *buffer_->activities.back();
      a.device = r.device;
      a.resource = static_cast<int32_t>(stream);
      a.startTime = r.startNs;
      a.endTime = r.endNs;
      a.id = static_cast<int32_t>(++serial_);
      if (r.correlation != 0 && linked_activity) {
        a.linked = linked_activity(static_cast<int32_t>(r.correlation));
      }
      a.addMetadataQuoted("device", device_name(r.device));
      a.addMetadataQuoted("stream", std::to_string(stream));
    }
    records_.clear();
    for (const auto& [device, streams] : tracks_) {
      // The first device's info goes through getDeviceInfo, which Kineto asks for later.
      if (device != tracks_.begin()->first) logger.handleDeviceInfo(device_info(device), start_time);
      for (int64_t stream : streams) logger.handleResourceInfo(resource_info(device, stream), start_time);
    }
    for (const auto& a : buffer_->activities) logger.handleGenericActivity(*a);
  }

  // Non-null once there are device tracks: Kineto then does not label
  // pids 0-15 "GPU n" (processTrace named the other devices).
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    if (tracks_.empty()) return nullptr;
    return std::make_unique<libkineto::DeviceInfo>(device_info(tracks_.begin()->first));
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override { return {}; }

  // The activities the logger was given live as long as the trace: Kineto
  // keeps this buffer with it.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

  void pushCorrelationId(uint64_t id) override { fsimPushCorrelationId(id); }
  void popCorrelationId() override { fsimPopCorrelationId(); }

 private:
  static libkineto::DeviceInfo device_info(int64_t device) {
    return {device, kDeviceSortIndex + device, device_name(device), device_name(device)};
  }
  static libkineto::ResourceInfo resource_info(int64_t device, int64_t stream) {
    return {stream, stream, device, stream_name(stream)};
  }

  std::vector<fsimLaunchRecord> records_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  std::map<int64_t, std::set<int64_t>> tracks_;  // device -> streams with events
  uint64_t serial_ = 0;
};

class DeviceProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }

  const std::set<ActivityType>& availableActivities() const override { return activities_; }

  // A session only when device kernels are asked for: a CPU-only profile
  // records nothing on the device and pays nothing for it.
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& activity_types,
                                                                 const libkineto::Config&) override {
    if (!plugin_enabled.load() || !activity_types.contains(ActivityType::CONCURRENT_KERNEL)) return nullptr;
    return std::make_unique<DeviceSession>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<ActivityType>& activity_types,
                                                                 const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

 private:
  std::string name_{"flagos"};
  std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                     ActivityType::GPU_MEMSET};
};

REGISTER_PRIVATEUSE1_PROFILER(DeviceProfiler);

}  // namespace

void set_profiler_plugin_enabled(bool enabled) { plugin_enabled.store(enabled); }
bool profiler_plugin_enabled() { return plugin_enabled.load(); }

}  // namespace flagos

#else  // FLAGOS_WITH_CANN

#include "runtime/profiler.h"

namespace flagos {
void set_profiler_plugin_enabled(bool) {}
bool profiler_plugin_enabled() { return false; }
}  // namespace flagos

#endif
