// Streams and events. Each stream and event belongs to the device that was
// current when it was created, which is exactly what launch validation and
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

#include "runtime.h"

namespace fsim {
namespace {

struct Stream;
struct Event;

// How long a worker that ran out of work polls for more before it sleeps.
constexpr std::chrono::microseconds kSpin{50};

enum class ItemKind { kTask, kRecord, kWait };

// One entry of a stream's queue. Every entry is a position of the stream.
struct Item {
  ItemKind kind = ItemKind::kTask;
  Task task;                   // kTask
  Event* event = nullptr;      // kRecord: the event, and which of its records this is
  uint64_t recordSerial = 0;
  Stream* target = nullptr;    // kWait: the stream and position waited for
  uint64_t targetPoint = 0;
};

struct Stream {
  int device = -1;
  bool alive = true;
  std::string name;  // for messages: "stream 0x... (device 1)", "the default stream of device 1"
  Timeline timeline = 0;
  Clock clock;  // what this stream's last queued position comes after
  std::deque<Item> queue;
  uint64_t enqueued = 0;   // positions queued
  uint64_t completed = 0;  // positions done (a prefix: streams run in order)
  uint64_t demand = 0;     // lazy mode: positions something waits for
  aclError error = ACL_SUCCESS;  // the first failure since the last synchronization
  std::string errorMessage;
  std::thread worker;
  bool running = false;   // the worker is running a task, unlocked
  bool sleeping = false;  // the worker waits on `wake` (only then is it notified)
  std::atomic<uint64_t> signals{0};  // bumped by wakeWorker and releaseAndWake, read while spinning
  bool stop = false;
  std::condition_variable wake;
};

struct Event {
  int device = -1;
  uint32_t flags = 0;
  bool alive = true;
  bool recorded = false;
  Stream* stream = nullptr;  // where it was last recorded
  uint64_t point = 0;        // that stream's position of the record
  uint64_t serial = 0;       // records so far
  bool stamped = false;      // the latest record completed, at timestampNs
  uint64_t timestampNs = 0;
  Clock clock;  // what the latest record comes after
};

// aclrtCreateEvent's flags: CANN's RT_EVENT_DEFAULT (DDSYNC | TIME_LINE | STREAM_MARK).
constexpr uint32_t kDefaultEventFlags = 0x4 | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS;
// The flags aclrtCreateEventWithFlag accepts (CANN's RT_EVENT_FLAG_MAX).
constexpr uint32_t kEventFlagMask = 0x3F;
// Flags with which an event can be waited for (the rest are timeline-only).
constexpr uint32_t kWaitableFlags = ACL_EVENT_SYNC | 0x4 | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

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

struct Handles {
  std::mutex mutex;
  std::condition_variable progress;  // some stream completed a position
  // Every stream and event ever created, by handle; dead ones stay.
  std::unordered_map<const void*, std::unique_ptr<Stream>> streams;
  std::unordered_map<const void*, std::unique_ptr<Event>> events;
  // Each device's default stream (the nullptr handle); replaced after a reset.
  std::array<Stream*, kMaxDevices> defaults{};
  std::vector<std::unique_ptr<Stream>> defaultStreams;  // owns them, dead ones included
  bool exiting = false;  // the process is exiting: workers run nothing more
  bool atexitRegistered = false;
};

Handles& handles() {
  static Handles* h = new Handles;  // leaked: threads may use handles during exit
  return *h;
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

// Requires the mutex (held by `lock`). Waits until stream `s` has completed
// position `point`, asking for it in lazy mode.
void waitFor(std::unique_lock<std::mutex>& lock, Stream* s, uint64_t point) {
  Handles& h = handles();
  if (s->completed >= point) return;
  demand(s, point);
  h.progress.wait(lock, [&] {
    if (s->completed < point && lazy()) demand(s, point);  // the mode may have changed
    return s->completed >= point || h.exiting;  // at exit the rest is dropped
  });
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

// Requires the mutex. Appends an item, starting the worker on first use.
// The item comes after everything the host did before (program order); a
// task's accesses are checked and recorded at its position. The caller
// wakes the worker with releaseAndWake.
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

// Releases `lock` (the mutex), then tells the worker of `s` that work was
// pushed. After, not before: a worker spinning for work would otherwise
// contend for the lock the host still holds.
void releaseAndWake(std::unique_lock<std::mutex>& lock, Stream* s) {
  const bool sleeping = s->sleeping;
  lock.unlock();
  signalWorker(s, sleeping);
}

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

// Requires the mutex. The live stream behind a non-null handle, or nullptr.
Stream* liveStream(Handles& h, aclrtStream stream) {
  auto it = h.streams.find(stream);
  return it != h.streams.end() && it->second->alive ? it->second.get() : nullptr;
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

// Requires the mutex (held by `lock`). Before a call queues on `stream` (a
// handle, or nullptr for the current device's default stream): waits until
// that stream's queue has room. Called before the caller validates anything,
// since the mutex is released while waiting.
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

// Requires the mutex. The live event behind a handle, or nullptr.
Event* liveEvent(Handles& h, aclrtEvent event) {
  auto it = h.events.find(event);
  return it != h.events.end() && it->second->alive ? it->second.get() : nullptr;
}

bool complete(const Event& e) { return !e.recorded || e.stream->completed >= e.point; }

aclError staleStream(const char* fn, aclrtStream stream) {
  return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": stream ", stream,
              " is not a live stream (destroyed, its device was reset, or never created)");
}

aclError staleEvent(const char* fn, aclrtEvent event) {
  return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": event ", event, " is not a live event (destroyed or never created)");
}

aclError createEvent(const char* fn, aclrtEvent* event, uint32_t flags) {
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  auto ev = std::make_unique<Event>();
  ev->device = device;
  ev->flags = flags;
  *event = ev.get();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.events.emplace(ev.get(), std::move(ev));
  return ACL_SUCCESS;
}

// Resolves the stream of a call that queues work on it: a stale handle, no
// current device, or a stream of another device than the current one fail.
// Requires the mutex.
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

aclError aclrtCreateEvent(aclrtEvent* event) {
  const char* fn = "aclrtCreateEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  return createEvent(fn, event, kDefaultEventFlags);
}

// flag: an OR of ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4 and
// ACL_EVENT_TIME_LINE, or ACL_EVENT_DEVICE_USE_ONLY or ACL_EVENT_EXTERNAL
// alone (ACL_EVENT_IPC needs aclrtCreateEventExWithFlag).
aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  const char* fn = "aclrtCreateEventWithFlag";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  if ((flag & kEventFlagMask) == 0 || flag > kEventFlagMask)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": flag ", flag,
                " is not an OR of ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4 and ACL_EVENT_TIME_LINE, "
                "nor ACL_EVENT_DEVICE_USE_ONLY or ACL_EVENT_EXTERNAL alone");
  for (uint32_t alone : {ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL}) {
    if ((flag & alone) != 0 && flag != alone)
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": flag ", flag, " combines ",
                  alone == ACL_EVENT_EXTERNAL ? "ACL_EVENT_EXTERNAL" : "ACL_EVENT_DEVICE_USE_ONLY",
                  ", which must be used alone, with other flags");
  }
  return createEvent(fn, event, flag);
}

// Needs no current device. A pending record still completes (waits that
// were queued for it keep their point).
aclError aclrtDestroyEvent(aclrtEvent event) {
  const char* fn = "aclrtDestroyEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  e->alive = false;
  return ACL_SUCCESS;
}

// Records on a stream of the current device (the event's own device is not
// compared with it, as in CANN's open code): the event marks the stream's
// current end, and completes when the stream gets there.
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  const char* fn = "aclrtRecordEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  awaitRoom(lock, h, stream);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (stream != nullptr && liveStream(h, stream) == nullptr) return staleStream(fn, stream);
  if (e->flags == ACL_EVENT_DEVICE_USE_ONLY)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " was created with ACL_EVENT_DEVICE_USE_ONLY and cannot be recorded from the host");
  Stream* s = nullptr;
  if (aclError err = streamOfCurrentDevice(fn, h, stream, &s)) return err;
  if (!streamMode(fn)) return ACL_ERROR_RT_PARAM_INVALID;
  e->recorded = true;
  e->stream = s;
  e->serial++;
  e->stamped = false;
  Item item;
  item.kind = ItemKind::kRecord;
  item.event = e;
  item.recordSerial = e->serial;
  push(h, s, std::move(item));
  e->point = s->enqueued;
  e->clock = s->clock;
  releaseAndWake(lock, s);
  return ACL_SUCCESS;
}

// The stream (of the current device) waits for the event's latest record at
// the time of this call, which may be on any device.
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  const char* fn = "aclrtStreamWaitEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  awaitRoom(lock, h, stream);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (stream != nullptr && liveStream(h, stream) == nullptr) return staleStream(fn, stream);
  if (e->flags == ACL_EVENT_DEVICE_USE_ONLY)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " was created with ACL_EVENT_DEVICE_USE_ONLY and can be waited for on the device only");
  if ((e->flags & kWaitableFlags) == 0)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event, " has flags ", e->flags,
                ", without ACL_EVENT_SYNC: it cannot be waited for");
  Stream* s = nullptr;
  if (aclError err = streamOfCurrentDevice(fn, h, stream, &s)) return err;
  if (!e->recorded && (e->flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL)) == 0)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " has never been recorded (call aclrtRecordEvent first)");
  if (!streamMode(fn)) return ACL_ERROR_RT_PARAM_INVALID;
  if (!e->recorded) return ACL_SUCCESS;  // a sync event never recorded: nothing to wait for
  Item item;
  item.kind = ItemKind::kWait;
  item.target = e->stream;
  item.targetPoint = e->point;
  push(h, s, std::move(item));
  s->clock.join(e->clock);
  releaseAndWake(lock, s);
  return ACL_SUCCESS;
}

// Any device's event, no current device needed; a never-recorded event
// returns at once. Failures of the work waited for stay with its stream.
aclError aclrtSynchronizeEvent(aclrtEvent event) {
  const char* fn = "aclrtSynchronizeEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (e->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event,
                " was created with ACL_EVENT_EXTERNAL and cannot be synchronized");
  if (!e->recorded) return ACL_SUCCESS;
  const Clock clock = e->clock;
  waitFor(lock, e->stream, e->point);
  hostObserved(clock);
  return ACL_SUCCESS;
}

// NOT_READY only while a recorded point is pending; a never-recorded event
// is COMPLETE.
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status) {
  const char* fn = "aclrtQueryEvent";
  if (event == nullptr || status == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", event == nullptr ? "event" : "status", " is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (e->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event,
                " was created with ACL_EVENT_EXTERNAL and cannot be queried");
  if (complete(*e)) {
    if (e->recorded) hostObserved(e->clock);
    *status = ACL_EVENT_STATUS_COMPLETE;
  } else {
    *status = ACL_EVENT_STATUS_NOT_READY;
  }
  return ACL_SUCCESS;
}

// Milliseconds from startEvent's completion to endEvent's.
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  const char* fn = "aclrtEventElapsedTime";
  if (ms == nullptr || startEvent == nullptr || endEvent == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ",
                ms == nullptr ? "ms" : startEvent == nullptr ? "startEvent" : "endEvent", " is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* start = liveEvent(h, startEvent);
  if (start == nullptr) return staleEvent(fn, startEvent);
  Event* end = liveEvent(h, endEvent);
  if (end == nullptr) return staleEvent(fn, endEvent);
  if (start->flags == ACL_EVENT_EXTERNAL || end->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": events created with ACL_EVENT_EXTERNAL have no time");
  if (!start->recorded || !end->recorded)
    return fail(ACL_ERROR_RT_INTERNAL_ERROR, fn, ": ", !start->recorded ? "startEvent " : "endEvent ",
                !start->recorded ? startEvent : endEvent, " has never been recorded");
  if (!start->stamped || !end->stamped)
    return fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, fn, ": ", !start->stamped ? "startEvent" : "endEvent",
                " has not completed yet (synchronize it first)");
  *ms = static_cast<float>((static_cast<double>(end->timestampNs) - static_cast<double>(start->timestampNs)) / 1e6);
  return ACL_SUCCESS;
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
