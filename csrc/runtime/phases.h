// Where a flagos op's host time goes: optional probes for the benchmark's
// per-phase breakdown (`python -m benchmarks`, figures host.breakdown).
//
// Off by default, and then each probe is one relaxed load of a global flag
// and a branch: no clock read, no thread-local access. When switched on
// (torch_fl._C._set_phase_probes(True)), each probe reads the CPU's time
// stamp counter and adds the span to the calling thread's totals, which
// _phase_totals() converts to nanoseconds.
//
//   kernel     the outermost flagos kernel, from its entry to its return
//              (generated wrappers, the composite guards and the handwritten
//              kernels that carry a KernelSpan; a launch outside any of them
//              counts as its own kernel); a kernel called from a kernel is
//              not counted twice
//   launch     FLAGOS_GUARDED_LAUNCH past the guard: everything below
//   record     argument conversion: the launch record (cache key, addresses)
//   cache      executor-cache hash, lookup and rebinding of a hit
//   phase_one  a miss: the ACLNN argument objects and phase 1
//   phase_two  the phase-2 call: on the simulator, its own work (validation
//              and the CPU kernel); on hardware, the enqueue
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace flagos::phases {

enum Phase : int { kKernel, kLaunch, kRecord, kCache, kPhaseOne, kPhaseTwo, kCount };

namespace detail {

extern std::atomic<bool> enabled;

struct ThreadTotals {
  uint64_t ticks[kCount] = {};
  uint64_t kernels = 0;   // outermost kernels entered
  uint64_t launches = 0;  // FLAGOS_GUARDED_LAUNCHes
  int depth = 0;          // kernels in progress on this thread
};

ThreadTotals& totals();

inline uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

}  // namespace detail

inline bool enabled() { return detail::enabled.load(std::memory_order_relaxed); }

// Adds its scope's duration to one phase.
class Span {
 public:
  explicit Span(Phase phase) : phase_(phase), start_(enabled() ? detail::ticks() : 0) {}
  ~Span() {
    if (start_ != 0) detail::totals().ticks[phase_] += detail::ticks() - start_;
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  Phase phase_;
  uint64_t start_;
};

// A kernel's whole body; only the outermost one on a thread counts.
class KernelSpan {
 public:
  KernelSpan() {
    if (enabled()) {
      detail::ThreadTotals& t = detail::totals();
      totals_ = &t;
      if (t.depth++ == 0) start_ = detail::ticks();
    }
  }
  ~KernelSpan() {
    if (totals_ != nullptr && --totals_->depth == 0 && start_ != 0) {
      totals_->ticks[kKernel] += detail::ticks() - start_;
      ++totals_->kernels;
    }
  }
  KernelSpan(const KernelSpan&) = delete;
  KernelSpan& operator=(const KernelSpan&) = delete;

 private:
  detail::ThreadTotals* totals_ = nullptr;
  uint64_t start_ = 0;
};

// A launch (FLAGOS_GUARDED_LAUNCH past its guard). A launch made outside
// any KernelSpan (a handwritten kernel without one) also counts as its own
// kernel, so that `kernel - launch` (the wrappers' own time) is never
// negative; such a kernel's code before its launch is then counted with the
// dispatcher's.
class LaunchSpan {
 public:
  LaunchSpan() {
    if (enabled()) {
      totals_ = &detail::totals();
      ++totals_->launches;
      start_ = detail::ticks();
    }
  }
  ~LaunchSpan() {
    if (totals_ != nullptr) {
      const uint64_t span = detail::ticks() - start_;
      totals_->ticks[kLaunch] += span;
      if (totals_->depth == 0) {
        totals_->ticks[kKernel] += span;
        ++totals_->kernels;
      }
    }
  }
  LaunchSpan(const LaunchSpan&) = delete;
  LaunchSpan& operator=(const LaunchSpan&) = delete;

 private:
  detail::ThreadTotals* totals_ = nullptr;
  uint64_t start_ = 0;
};

// The calling thread's totals since its last reset, in nanoseconds.
struct Totals {
  double ns[kCount] = {};
  uint64_t kernels = 0;
  uint64_t launches = 0;
};
void set_enabled(bool on);
void reset();  // the calling thread's totals, and the clock calibration
Totals read();
const char* name(Phase phase);

}  // namespace flagos::phases
