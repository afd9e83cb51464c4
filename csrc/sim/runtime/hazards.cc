// The happens-before tracker (see runtime.h): which accesses to simulated
// memory the program's own synchronization orders, and which it does not.
//
// It decides from the order of the runtime calls alone, never from when the
// worker threads happen to run, so a missing wait is reported on every run,
// even when the work it should have waited for finished in time.
#include <deque>
#include <unordered_map>

#include "runtime.h"

namespace fsim {
namespace {

// One recorded access: which timeline, at which of its positions, by what.
struct Record {
  Timeline timeline = 0;
  uint64_t epoch = 0;
  const char* what = "";
};

// The accesses of one allocation since its last write.
struct State {
  bool written = false;
  Record write;
  std::vector<Record> reads;  // at most one per timeline
  bool pinned = false;
  int device = -1;
  uintptr_t base = 0;
};

constexpr size_t kKeptReports = 32;

struct Tracker {
  std::mutex mutex;
  Clock host;                       // host.at(kHostTimeline): the host's own epoch
  std::vector<std::string> names{"the host"};
  std::unordered_map<uint64_t, State> allocations;  // by AllocInfo::id
  uint64_t hazards = 0;
  std::deque<std::string> reports;  // the latest kKeptReports descriptions
};

Tracker& tracker() {
  static Tracker* t = new Tracker;  // leaked: workers may track during exit
  return *t;
}

bool ordered(const Record& r, Timeline t, const Clock& clock) {
  return r.timeline == t || r.epoch <= clock.at(r.timeline);
}

std::string memory(const State& s) {
  return s.pinned ? cat("pinned host memory at ", reinterpret_cast<void*>(s.base))
                  : cat("device memory at ", reinterpret_cast<void*>(s.base), " (device ", s.device, ")");
}

// Requires the mutex.
void report(Tracker& tr, std::string message) {
  tr.hazards++;
  tr.reports.push_back(std::move(message));
  if (tr.reports.size() > kKeptReports) tr.reports.pop_front();
}

// Requires the mutex. Checks one access against the allocation's history,
// reports the first unordered conflict, and records the access.
void access(Tracker& tr, Timeline t, const Clock& clock, const Access& a, const char* what) {
  State& s = tr.allocations[a.alloc.id];
  s.pinned = a.alloc.device < 0;
  s.device = a.alloc.device;
  s.base = a.alloc.base;
  const char* verb = a.write ? "writes" : "reads";
  if (s.written && !ordered(s.write, t, clock)) {
    report(tr, cat(what, " on ", tr.names[t], " ", verb, " ", memory(s), " that ", s.write.what, " on ",
                   tr.names[s.write.timeline], " writes, with nothing ordering the two (",
                   a.write ? "write after write" : "read after write", ")"));
  } else if (a.write) {
    for (const Record& r : s.reads) {
      if (!ordered(r, t, clock)) {
        report(tr, cat(what, " on ", tr.names[t], " writes ", memory(s), " that ", r.what, " on ",
                       tr.names[r.timeline], " reads, with nothing ordering the two (write after read)"));
        break;
      }
    }
  }
  const Record mine{t, clock.at(t), what};
  if (a.write) {
    s.written = true;
    s.write = mine;
    s.reads.clear();
    return;
  }
  for (Record& r : s.reads) {
    if (r.timeline == t) {
      r = mine;
      return;
    }
  }
  s.reads.push_back(mine);
}

thread_local std::string tReport;

}  // namespace

Timeline newTimeline(std::string name) {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  tr.names.push_back(std::move(name));
  return static_cast<Timeline>(tr.names.size() - 1);
}

void queuedAt(Timeline t, Clock& clock, uint64_t position, const std::vector<Access>& accesses, const char* what) {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  clock.join(tr.host);
  clock.set(t, position);
  for (const Access& a : accesses) access(tr, t, clock, a, what);
}

void hostObserved(const Clock& clock) {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  tr.host.join(clock);
}

void hostAccesses(const std::vector<Access>& accesses, const char* what) {
  if (accesses.empty()) return;
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  tr.host.set(kHostTimeline, tr.host.at(kHostTimeline) + 1);
  for (const Access& a : accesses) access(tr, kHostTimeline, tr.host, a, what);
}

void forgetAllocation(uint64_t id) {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  tr.allocations.erase(id);
}

uint64_t hazardCount() {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  return tr.hazards;
}

void resetHazards() {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  tr.hazards = 0;
  tr.reports.clear();
}

}  // namespace fsim

using namespace fsim;

extern "C" {

const char* fsimHazardReport(void) {
  Tracker& tr = tracker();
  std::lock_guard lock(tr.mutex);
  tReport.clear();
  for (const std::string& r : tr.reports) {
    tReport += r;
    tReport += '\n';
  }
  return tReport.c_str();
}

}  // extern "C"
