// The streams' shared state: their queues, events and handles, for
// streams.cc (queues, workers, the stream API) and events.cc (the event API).
// Everything here requires handles().mutex unless it says otherwise.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime.h"

namespace fsim {

struct Stream;
struct Event;

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

Handles& handles();

// Requires the mutex (held by `lock`). Waits until stream `s` has completed
// position `point`, asking for it in lazy mode.
void waitFor(std::unique_lock<std::mutex>& lock, Stream* s, uint64_t point);

// Requires the mutex. Appends an item, starting the worker on first use.
// The item comes after everything the host did before (program order); a
// task's accesses are checked and recorded at its position. The caller
// wakes the worker with releaseAndWake.
void push(Handles& h, Stream* s, Item item);

// Releases `lock` (the mutex), then tells the worker of `s` that work was
// pushed. After, not before: a worker spinning for work would otherwise
// contend for the lock the host still holds.
void releaseAndWake(std::unique_lock<std::mutex>& lock, Stream* s);

// Requires the mutex. The live stream behind a non-null handle, or nullptr.
Stream* liveStream(Handles& h, aclrtStream stream);

// Requires the mutex (held by `lock`). Before a call queues on `stream` (a
// handle, or nullptr for the current device's default stream): waits until
// that stream's queue has room. Called before the caller validates anything,
// since the mutex is released while waiting.
void awaitRoom(std::unique_lock<std::mutex>& lock, Handles& h, aclrtStream stream);

aclError staleStream(const char* fn, aclrtStream stream);

// Resolves the stream of a call that queues work on it: a stale handle, no
// current device, or a stream of another device than the current one fail.
// Requires the mutex.
aclError streamOfCurrentDevice(const char* fn, Handles& h, aclrtStream stream, Stream** out);

}  // namespace fsim
