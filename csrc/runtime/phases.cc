#include "runtime/phases.h"

#include <chrono>

namespace flagos::phases {

std::atomic<bool> detail::enabled{false};

namespace {

struct Calibration {
  uint64_t ticks = 0;
  int64_t ns = 0;
};

thread_local detail::ThreadTotals tls_totals;
thread_local Calibration tls_since;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

detail::ThreadTotals& detail::totals() { return tls_totals; }

void set_enabled(bool on) { detail::enabled.store(on); }

void reset() {
  const int depth = tls_totals.depth;
  tls_totals = detail::ThreadTotals{};
  tls_totals.depth = depth;
  tls_since = Calibration{detail::ticks(), steady_ns()};
}

Totals read() {
  // The counter's rate, from the time since the reset: the timed loops
  // between a reset and a read last milliseconds, which makes it exact to
  // well under a percent.
  const uint64_t ticks = detail::ticks() - tls_since.ticks;
  const int64_t ns = steady_ns() - tls_since.ns;
  const double ns_per_tick = ticks > 0 && tls_since.ns != 0 ? static_cast<double>(ns) / static_cast<double>(ticks) : 0.0;
  Totals out;
  for (int p = 0; p < kCount; ++p) out.ns[p] = static_cast<double>(tls_totals.ticks[p]) * ns_per_tick;
  out.kernels = tls_totals.kernels;
  out.launches = tls_totals.launches;
  return out;
}

const char* name(Phase phase) {
  switch (phase) {
    case kKernel: return "kernel";
    case kLaunch: return "launch";
    case kRecord: return "record";
    case kCache: return "cache";
    case kPhaseOne: return "phase_one";
    case kPhaseTwo: return "phase_two";
    default: return "?";
  }
}

}  // namespace flagos::phases
