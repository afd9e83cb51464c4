// Launch records (fsimRecordLaunches): the kernels and async copies that ran,
// with their device, stream, times and the correlation id of the thread that
// queued them; what a profiler shows on its device tracks.
#include <time.h>

#include <cstring>

#include "runtime.h"

namespace fsim {
namespace {

std::atomic<bool> gRecording{false};
// Bumped by every start: a correlation id pushed during an earlier recording
// and never popped (the profiler stopped inside an op) tags nothing later.
std::atomic<uint64_t> gRecordingSerial{0};

struct Records {
  std::mutex mutex;
  std::vector<fsimLaunchRecord> done;  // oldest first
};

Records& records() {
  static Records* r = new Records;  // leaked: workers may finish work during exit
  return *r;
}

struct Correlation {
  uint64_t id;
  uint64_t recordingSerial;
};
thread_local std::vector<Correlation> tCorrelationIds;

int32_t kindOf(const char* what) {
  if (std::strstr(what, "Memcpy") != nullptr) return FSIM_RECORD_MEMCPY;
  if (std::strstr(what, "Memset") != nullptr) return FSIM_RECORD_MEMSET;
  return FSIM_RECORD_KERNEL;
}

}  // namespace

bool recordingLaunches() { return gRecording.load(std::memory_order_relaxed); }

void markRecorded(Task& task, aclrtStream stream) {
  task.recorded = true;
  const bool current = !tCorrelationIds.empty() &&
                       tCorrelationIds.back().recordingSerial == gRecordingSerial.load(std::memory_order_relaxed);
  task.correlation = current ? tCorrelationIds.back().id : 0;
  task.stream = stream;
}

void addRecord(const Task& task, int device, int64_t startNs, int64_t endNs) {
  Records& r = records();
  std::lock_guard lock(r.mutex);
  r.done.push_back({task.what, kindOf(task.what), device, task.stream, task.correlation, startNs, endNs});
}

int64_t realtimeNs() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

void fsimRecordLaunches(int32_t on) {
  if (on) {
    Records& r = records();
    std::lock_guard lock(r.mutex);
    r.done.clear();
    gRecordingSerial.fetch_add(1, std::memory_order_relaxed);
  }
  gRecording.store(on != 0, std::memory_order_relaxed);
}

void fsimPushCorrelationId(uint64_t id) {
  tCorrelationIds.push_back({id, gRecordingSerial.load(std::memory_order_relaxed)});
}

void fsimPopCorrelationId(void) {
  if (!tCorrelationIds.empty()) tCorrelationIds.pop_back();
}

size_t fsimTakeLaunchRecords(fsimLaunchRecord* out, size_t capacity) {
  Records& r = records();
  std::lock_guard lock(r.mutex);
  const size_t n = std::min(capacity, r.done.size());
  std::copy_n(r.done.begin(), n, out);
  r.done.erase(r.done.begin(), r.done.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

}  // extern "C"
