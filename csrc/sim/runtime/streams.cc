// Streams, their queues and worker threads (events: events.cc; the state
// both share: stream_queue.h). Each stream and event belongs to the device
// that was current when it was created, which is exactly what launch validation and
// CANN's "stream of the current context" rule (ACL_ERROR_RT_STREAM_CONTEXT)
// check.
//
// Streams are asynchronous: each has a worker thread that runs its queue in
// order (kernels, async copies and memsets, event records and waits), after
// the call that queued the work has returned. What a call captures is
// captured when it is made (a kernel's tensor addresses, the point an event
// wait waits for). An event record marks a point of its stream; it completes,
// with a timestamp, when the worker reaches it; a stream that waits for an
// event does not run past the wait before the event's point has completed,
// whatever device the event was recorded on. Synchronizing a stream, a
// device or an event waits, and reports (once) the first failure of the work
// it waited for, as CANN reports task failures: ACL_ERROR_RT_AICORE_EXCEPTION
// from aclrtSynchronizeStream / aclrtSynchronizeDevice.
//
// In lazy mode (fsimSetStreamMode, FLAGOS_SIM_STREAMS=lazy) a worker runs
// work only once something waits for it, so that a missing wait shows
// deterministically as stale memory.
//
// A stream's queue holds at most kQueueDepth positions: a call that queues
// more waits until the worker has made room, as CANN's host waits for room in
// a stream's submission queue. So the host never runs unboundedly ahead of
// the device, and what is left to run at exit is bounded.
//
// Handles are never reused: a destroyed stream or event (or a stream of a
// device torn down by a reset) keeps its object, marked dead, so a stale
// handle is always recognised (ACL_ERROR_RT_INVALID_HANDLE, as CANN's handle
// guard reports).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "stream_queue.h"

namespace fsim {
namespace {

// How long a worker that ran out of work polls for more before it sleeps.
constexpr std::chrono::microseconds kSpin{50};

// FLAGOS_SIM_STREAMS, read once; fsimSetStreamMode overrides it.
struct ModeConfig {
  std::atomic<int> mode{FSIM_STREAMS_ASYNC};
  std::atomic<bool> envInvalid{false};
  std::string envError;
  ModeConfig() {
    if (const char* env = std::getenv("FLAGOS_SIM_STREAMS")) {
      std::string_view v = env;
      if (v == "lazy") {
        mode = FSIM_STREAMS_LAZY;
      } else if (v != "async") {
        envError = cat("FLAGOS_SIM_STREAMS='", env, "' must be 'async' or 'lazy'");
        envInvalid = true;
      }
    }
  }
};

ModeConfig& modeConfig() {
  static ModeConfig* config = new ModeConfig;
  return *config;
}

bool lazy() { return modeConfig().mode.load() == FSIM_STREAMS_LAZY; }

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Tells a stream's worker that its state changed; `sleeping` was read under
// the mutex (only a sleeping worker needs the notify).
void signalWorker(Stream* s, bool sleeping) {
  s->signals.fetch_add(1, std::memory_order_release);
  if (sleeping) s->wake.notify_all();
}

// Requires the mutex. Tells a stream's worker that its state changed. A
// worker that ran out of work spins a little before it sleeps, so a host
// queueing op after op does not pay a futex wake per op.
void wakeWorker(Stream* s) { signalWorker(s, s->sleeping); }

// Requires the mutex. Wakes a stream's worker for everything up to `point`.
void demand(Stream* s, uint64_t point) {
  if (s->demand < point) {
    s->demand = point;
    wakeWorker(s);
  }
}

// Requires the mutex. The host has seen everything queued on `s` so far complete.
void observe(Stream* s) { hostObserved(s->clock); }

// Requires the mutex. Takes the stream's pending error and its message.
aclError takeError(Stream* s, std::string* message) {
  if (s->error == ACL_SUCCESS) return ACL_SUCCESS;
  const aclError e = s->error;
  *message = std::move(s->errorMessage);
  s->error = ACL_SUCCESS;
  s->errorMessage.clear();
  return e;
}

// Requires the mutex. Takes the stream's pending error, with the message set.
aclError takeError(const char* fn, Stream* s) {
  std::string message;
  const aclError e = takeError(s, &message);
  if (e != ACL_SUCCESS) setError(cat(fn, ": ", message));
  return e;
}

void runWorker(Stream* s);

void stopAtExit();

// Requires the mutex (held by `lock`). Finishes the stream's front item.
void finish(Handles& h, Stream* s) {
  s->queue.pop_front();
  s->completed++;
  h.progress.notify_all();
}

void runWorker(Stream* s) {
  Handles& h = handles();
  std::unique_lock lock = lockSoon(h.mutex);
  auto ready = [&] {
    if (h.exiting) return true;
    if (s->queue.empty()) return s->stop;
    return !lazy() || s->demand > s->completed;
  };
  while (true) {
    if (!ready()) {
      // Spin up to kSpin for the next signal, off the lock, then sleep.
      const uint64_t seen = s->signals.load(std::memory_order_acquire);
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + kSpin;
      while (s->signals.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      lock = lockSoon(h.mutex);
      s->sleeping = true;
      s->wake.wait(lock, ready);
      s->sleeping = false;
    }
    if (h.exiting || s->queue.empty()) return;
    Item& item = s->queue.front();
    switch (item.kind) {
      case ItemKind::kWait: {
        Stream* target = item.targetPoint > 0 ? item.target : nullptr;
        if (target != nullptr && target->completed < item.targetPoint) {
          demand(target, item.targetPoint);
          h.progress.wait(lock, [&] {
            if (target->completed < item.targetPoint && lazy()) demand(target, item.targetPoint);
            return h.exiting || target->completed >= item.targetPoint;
          });
          if (h.exiting) return;
        }
        finish(h, s);
        break;
      }
      case ItemKind::kRecord: {
        Event* e = item.event;
        if (e->serial == item.recordSerial) {
          e->stamped = true;
          e->timestampNs = nowNs();
        }
        finish(h, s);
        break;
      }
      case ItemKind::kTask: {
        Task task = std::move(item.task);
        s->running = true;
        lock.unlock();
        std::string error;
        const int64_t startNs = task.recorded ? realtimeNs() : 0;
        try {
          AccessGrant grant;  // the memory the task may touch (FLAGOS_SIM_PROTECT)
          for (const Access& a : task.work->accesses) grant.add(a.alloc);
          error = task.work->run();
        } catch (const std::exception& e) {
          error = cat(task.what, ": ", e.what());
        }
        if (task.recorded) addRecord(task, s->device, startNs, realtimeNs());
        releaseMemory(task.work->accesses);
        task.work.reset();  // before the position completes: its owner may reuse it then
        lock = lockSoon(h.mutex);
        s->running = false;
        if (!error.empty()) {
          counters().failedTasks++;
          if (s->error == ACL_SUCCESS) {
            s->error = ACL_ERROR_RT_AICORE_EXCEPTION;
            s->errorMessage = cat("a task failed on ", s->name, " (ACL_ERROR_RT_AICORE_EXCEPTION): ", error);
          }
        }
        finish(h, s);
        break;
      }
    }
  }
}

// Requires the mutex (held by `lock`). Waits for everything queued on `s`.
void drain(std::unique_lock<std::mutex>& lock, Stream* s) { waitFor(lock, s, s->enqueued); }

// At exit, the C++ static objects constructed after this handler was
// registered (oneDNN's primitive cache, say) are already destroyed: a kernel
// run now could use freed memory or a destroyed lock. So queued work is
// dropped rather than run, and a task already running gets a bounded time to
// end. A task that was running while those destructors ran can still fault:
// a program must finish its work before exit() (torch_fl's module does, at
// the end of interpreter finalization).
void stopAtExit() {
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  h.exiting = true;
  size_t dropped = 0;
  auto stop = [&](Stream* s) {
    dropped += s->queue.size() - (s->running ? 1 : 0);
    wakeWorker(s);
  };
  for (auto& [handle, s] : h.streams) stop(s.get());
  for (auto& s : h.defaultStreams) stop(s.get());
  if (dropped > 0)  // results nobody waited for: say so rather than drop them silently
    std::fprintf(stderr, "flagos simulator: exiting with %zu queued stream items not run (synchronize before exit)\n",
                 dropped);
  h.progress.notify_all();
  auto anyRunning = [&] {
    for (auto& [handle, s] : h.streams)
      if (s->running) return true;
    for (auto& s : h.defaultStreams)
      if (s->running) return true;
    return false;
  };
  h.progress.wait_for(lock, std::chrono::seconds(10), [&] { return !anyRunning(); });
}

// Requires the mutex. A device's default stream.
Stream* defaultStream(Handles& h, int device) {
  if (h.defaults[device] == nullptr) {
    h.defaultStreams.push_back(std::make_unique<Stream>());
    Stream* s = h.defaultStreams.back().get();
    s->device = device;
    s->name = cat("the default stream of device ", device);
    s->timeline = newTimeline(s->name);
    h.defaults[device] = s;
  }
  return h.defaults[device];
}

// Requires the mutex. The live stream behind a handle of any device (nullptr:
// the current device's default stream), or nullptr with the error set.
aclError anyStream(const char* fn, Handles& h, aclrtStream stream, Stream** out) {
  if (stream != nullptr) {
    Stream* s = liveStream(h, stream);
    if (s == nullptr)
      return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": stream ", stream,
                  " is not a live stream (destroyed, its device was reset, or never created)");
    *out = s;
  }
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  if (stream == nullptr) *out = defaultStream(h, device);
  return ACL_SUCCESS;
}

// Requires the mutex (held by `lock`). Stops the workers of dead streams
// once their queues are empty; the threads to join after unlocking.
void stopWorker(Stream* s, std::vector<std::thread>& joins) {
  s->stop = true;
  wakeWorker(s);
  if (s->worker.joinable()) joins.push_back(std::move(s->worker));
}

void joinAll(std::vector<std::thread>& joins) {
  for (std::thread& t : joins) {
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // a reset from inside a task: the worker ends by itself
    } else {
      t.join();
    }
  }
}

}  // namespace

Handles& handles() {
  static Handles* h = new Handles;  // leaked: threads may use handles during exit
  return *h;
}

void waitFor(std::unique_lock<std::mutex>& lock, Stream* s, uint64_t point) {
  Handles& h = handles();
  if (s->completed >= point) return;
  demand(s, point);
  h.progress.wait(lock, [&] {
    if (s->completed < point && lazy()) demand(s, point);  // the mode may have changed
    return s->completed >= point || h.exiting;  // at exit the rest is dropped
  });
}

void push(Handles& h, Stream* s, Item item) {
  if (!s->worker.joinable()) {
    if (!h.atexitRegistered) {
      // Runs before the destructors of static objects constructed before
      // this point, not of those constructed later (see stopAtExit).
      std::atexit(stopAtExit);
      h.atexitRegistered = true;
    }
    s->worker = std::thread(runWorker, s);
  }
  s->enqueued++;
  static const std::vector<Access> kNone;
  const Task& task = item.task;
  queuedAt(s->timeline, s->clock, s->enqueued, task.work != nullptr ? task.work->accesses : kNone, task.what);
  s->queue.push_back(std::move(item));
}

void releaseAndWake(std::unique_lock<std::mutex>& lock, Stream* s) {
  const bool sleeping = s->sleeping;
  lock.unlock();
  signalWorker(s, sleeping);
}

Stream* liveStream(Handles& h, aclrtStream stream) {
  auto it = h.streams.find(stream);
  return it != h.streams.end() && it->second->alive ? it->second.get() : nullptr;
}

void awaitRoom(std::unique_lock<std::mutex>& lock, Handles& h, aclrtStream stream) {
  Stream* s = nullptr;
  if (stream != nullptr) {
    s = liveStream(h, stream);
  } else if (const int device = currentDevice(); device >= 0) {
    s = h.defaults[device];
  }
  if (s == nullptr || h.exiting || s->enqueued - s->completed < kQueueDepth) return;
  waitFor(lock, s, s->enqueued - kQueueDepth + 1);
}

aclError staleStream(const char* fn, aclrtStream stream) {
  return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": stream ", stream,
              " is not a live stream (destroyed, its device was reset, or never created)");
}

aclError streamOfCurrentDevice(const char* fn, Handles& h, aclrtStream stream, Stream** out) {
  Stream* s = stream != nullptr ? liveStream(h, stream) : nullptr;
  if (stream != nullptr && s == nullptr) return staleStream(fn, stream);
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  if (s == nullptr) s = defaultStream(h, current);
  if (s->device != current)
    return fail(ACL_ERROR_RT_STREAM_CONTEXT, fn, ": stream ", stream, " belongs to device ", s->device,
                " but the current device is ", current);
  *out = s;
  return ACL_SUCCESS;
}

std::optional<fsimStreamMode> streamMode(const char* fn) {
  ModeConfig& c = modeConfig();
  if (c.envInvalid) {
    setError(cat(fn, ": ", c.envError));
    return std::nullopt;
  }
  return static_cast<fsimStreamMode>(c.mode.load());
}

std::optional<int> streamDevice(aclrtStream stream) {
  if (stream == nullptr) return currentDevice();
  Handles& h = handles();
  std::unique_lock lock = lockSoon(h.mutex);
  Stream* s = liveStream(h, stream);
  if (s == nullptr) return std::nullopt;
  return s->device;
}

void enqueue(aclrtStream stream, Task task) {
  Handles& h = handles();
  std::unique_lock lock = lockSoon(h.mutex);
  awaitRoom(lock, h, stream);
  Stream* s = stream != nullptr ? liveStream(h, stream) : nullptr;
  const int current = currentDevice();
  if (s == nullptr && stream == nullptr && current >= 0) s = defaultStream(h, current);
  if (s == nullptr || h.exiting) return;  // validated by the caller; or the process is ending
  retainMemory(task.work->accesses);
  if (recordingLaunches()) markRecorded(task, stream);
  Item item;
  item.kind = ItemKind::kTask;
  item.task = std::move(task);
  push(h, s, std::move(item));
  releaseAndWake(lock, s);
}

namespace {

struct CallWork final : Work {
  std::function<std::string()> fn;
  std::string run() const override { return fn(); }
};

}  // namespace

Task callTask(const char* what, std::vector<Access> accesses, std::function<std::string()> run) {
  auto work = std::make_shared<CallWork>();
  work->accesses = std::move(accesses);
  work->fn = std::move(run);
  return Task{what, std::move(work)};
}

aclError synchronizeStream(const char* fn, aclrtStream stream) {
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  Stream* s = nullptr;
  if (aclError e = anyStream(fn, h, stream, &s)) return e;
  drain(lock, s);
  observe(s);
  return takeError(fn, s);
}

void releaseDeviceStreams(int device) {
  Handles& h = handles();
  std::vector<std::thread> joins;
  {
    std::unique_lock lock(h.mutex);
    std::vector<Stream*> doomed;
    for (auto& [handle, s] : h.streams)
      if (s->alive && s->device == device) doomed.push_back(s.get());
    if (h.defaults[device] != nullptr) doomed.push_back(h.defaults[device]);
    for (Stream* s : doomed) {
      drain(lock, s);  // CANN waits for their tasks
      observe(s);
    }
    for (Stream* s : doomed) {
      s->alive = false;
      stopWorker(s, joins);
    }
    h.defaults[device] = nullptr;
    layoutChanged();
  }
  joinAll(joins);
}

}  // namespace fsim

using namespace fsim;

extern "C" {

aclError aclrtCreateStream(aclrtStream* stream) {
  const char* fn = "aclrtCreateStream";
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": stream is nullptr");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  auto s = std::make_unique<Stream>();
  s->device = device;
  s->name = cat("stream ", static_cast<void*>(s.get()), " (device ", device, ")");
  s->timeline = newTimeline(s->name);
  *stream = s.get();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.streams.emplace(s.get(), std::move(s));
  return ACL_SUCCESS;
}

// Only a stream of the current device can be destroyed. CANN waits for the
// work queued on it first.
aclError aclrtDestroyStream(aclrtStream stream) {
  const char* fn = "aclrtDestroyStream";
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": the default stream (nullptr) cannot be destroyed");
  Handles& h = handles();
  std::vector<std::thread> joins;
  {
    std::unique_lock lock(h.mutex);
    Stream* s = nullptr;
    if (aclError e = streamOfCurrentDevice(fn, h, stream, &s)) return e;
    drain(lock, s);
    observe(s);
    if (!s->alive) return staleStream(fn, stream);  // destroyed by another thread meanwhile
    s->alive = false;
    layoutChanged();
    stopWorker(s, joins);
  }
  joinAll(joins);
  return ACL_SUCCESS;
}

// Any device's stream: CANN switches to the stream's device for the wait,
// but the calling thread needs a current device all the same. Reports the
// first failure of the stream's work since its last synchronization.
aclError aclrtSynchronizeStream(aclrtStream stream) {
  return synchronizeStream("aclrtSynchronizeStream", stream);
}

// Any device's stream, as CANN's (no stream-context check).
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
  const char* fn = "aclrtStreamQuery";
  if (status == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": status is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Stream* s = nullptr;
  if (aclError e = anyStream(fn, h, stream, &s)) return e;
  if (s->completed < s->enqueued) {
    *status = ACL_STREAM_STATUS_NOT_READY;
  } else {
    observe(s);
    *status = ACL_STREAM_STATUS_COMPLETE;
  }
  return ACL_SUCCESS;
}

// Waits for every stream of the current device; reports the first failure
// among them (each stream's failure is cleared, as CANN's continue-on-failure
// mode does).
aclError aclrtSynchronizeDevice(void) {
  const char* fn = "aclrtSynchronizeDevice";
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  std::vector<Stream*> mine;
  for (auto& [handle, s] : h.streams)
    if (s->alive && s->device == device) mine.push_back(s.get());
  if (h.defaults[device] != nullptr) mine.push_back(h.defaults[device]);
  for (Stream* s : mine) demand(s, s->enqueued);
  aclError first = ACL_SUCCESS;
  std::string firstMessage;
  for (Stream* s : mine) {
    drain(lock, s);
    observe(s);
    std::string message;
    if (aclError e = takeError(s, &message); e != ACL_SUCCESS && first == ACL_SUCCESS) {
      first = e;
      firstMessage = std::move(message);
    }
  }
  if (first != ACL_SUCCESS) setError(cat(fn, ": ", firstMessage));
  return first;
}

int32_t fsimStreamDevice(void* stream) {
  std::optional<int> d = streamDevice(stream);
  if (!d) {
    setError(cat("fsimStreamDevice: stream ", stream, " is not a live stream"));
    return -1;
  }
  return *d;
}

void fsimSetStreamMode(fsimStreamMode mode) {
  if (mode != FSIM_STREAMS_ASYNC && mode != FSIM_STREAMS_LAZY) {
    setError(cat("fsimSetStreamMode: ", static_cast<int>(mode), " is not a fsimStreamMode"));
    return;
  }
  ModeConfig& c = modeConfig();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  c.mode = mode;
  c.envInvalid = false;
  // Held work may run now.
  for (auto& [handle, s] : h.streams) wakeWorker(s.get());
  for (auto& s : h.defaultStreams) wakeWorker(s.get());
  h.progress.notify_all();
}

fsimStreamMode fsimGetStreamMode(void) { return static_cast<fsimStreamMode>(modeConfig().mode.load()); }

void fsimDrainStreams(void) {
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  std::vector<Stream*> all;
  for (auto& [handle, s] : h.streams)
    if (s->alive) all.push_back(s.get());
  for (Stream* s : h.defaults)
    if (s != nullptr) all.push_back(s);
  for (Stream* s : all) demand(s, s->enqueued);
  for (Stream* s : all) {
    drain(lock, s);
    observe(s);
  }
}

}  // extern "C"
