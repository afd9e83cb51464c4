// Counters and their JSON view (fsimStatsJson).
#include <algorithm>
#include <string_view>

#include "runtime.h"

namespace fsim {
namespace {

thread_local std::string tStatsJson;

void appendEscaped(std::string& out, std::string_view s) {
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      out += cat("\\u00", "0123456789abcdef"[ch >> 4], "0123456789abcdef"[ch & 15]);
    } else {
      out += ch;
    }
  }
}

// {"0": v[0], ..., "n-1": v[n-1]}
template <class Array>
std::string perDevice(const Array& values, int devices) {
  std::string out = "{";
  for (int d = 0; d < devices; ++d) out += cat(d ? ", " : "", '"', d, "\": ", static_cast<uint64_t>(values[d]));
  return out + "}";
}

}  // namespace

Counters& counters() {
  static Counters* c = new Counters;  // leaked: threads may count during exit
  return *c;
}

std::atomic<uint64_t>& Counters::opLaunches(std::string_view op) {
  std::lock_guard lock(opMutex);
  auto it = opCounts.find(op);
  if (it == opCounts.end()) it = opCounts.try_emplace(std::string(op), 0).first;
  return it->second;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

const char* fsimStatsJson(void) {
  Counters& c = counters();
  const int devices = std::max(deviceCount("fsimStatsJson"), 0);
  std::array<uint64_t, kMaxDevices> liveCount{}, liveBytes{};
  liveMemory(liveCount, liveBytes);
  uint64_t pinnedCount = 0, pinnedBytes = 0;
  livePinnedMemory(pinnedCount, pinnedBytes);
  std::string ops = "{";
  {
    std::lock_guard lock(c.opMutex);
    for (const auto& [name, counter] : c.opCounts) {
      const uint64_t count = counter.load();
      if (count == 0) continue;  // not launched since the last reset
      if (ops.size() > 1) ops += ", ";
      ops += '"';
      appendEscaped(ops, name);
      ops += cat("\": ", count);
    }
  }
  ops += "}";
  tStatsJson = cat("{\"set_device_calls\": ", c.setDeviceCalls.load(),
                   ", \"launches\": ", perDevice(c.launches, devices),
                   ", \"rejected_launches\": ", c.rejectedLaunches.load(),
                   ", \"mismatched_launches\": ", c.mismatchedLaunches.load(),
                   ", \"live_allocations\": ", perDevice(liveCount, devices),
                   ", \"live_bytes\": ", perDevice(liveBytes, devices),
                   ", \"live_pinned_allocations\": ", pinnedCount,
                   ", \"live_pinned_bytes\": ", pinnedBytes,
                   ", \"op_launches\": ", ops,
                   ", \"peer_copies\": ", c.peerCopies.load(),
                   ", \"live_executors\": ", c.liveExecutors.load(),
                   ", \"live_arguments\": ", c.liveArguments.load(),
                   ", \"failed_tasks\": ", c.failedTasks.load(),
                   ", \"hazards\": ", hazardCount(),
                   ", \"lenient_kernel_errors\": ", c.lenientKernelErrors.load(), "}");
  return tStatsJson.c_str();
}

void fsimResetStats(void) {
  Counters& c = counters();
  c.setDeviceCalls = 0;
  for (auto& n : c.launches) n = 0;
  c.rejectedLaunches = 0;
  c.mismatchedLaunches = 0;
  c.peerCopies = 0;
  c.failedTasks = 0;
  c.lenientKernelErrors = 0;
  resetHazards();
  std::lock_guard lock(c.opMutex);
  for (auto& [name, counter] : c.opCounts) counter = 0;
}

}  // extern "C"
