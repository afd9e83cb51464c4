// What the simulator's HCCL calls share (hccl/): the communicator, the
// checks every call makes, and rounds over shared memory. comm.cc makes and
// queries communicators, collectives.cc runs the collectives and
// point-to-point messages, rounds.cc defines what is declared here.
#pragma once

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "../runtime/runtime.h"
#include "flagos/hccl_api.h"

namespace fsim {

using Bytes = std::vector<uint8_t>;

struct Segment;

struct Comm {
  int device = -1;
  uint32_t rank = 0;
  uint32_t size = 0;
  std::string id;
  std::chrono::milliseconds timeout{0};
  c10::intrusive_ptr<c10d::Store> store;
  std::mutex mutex;  // one call at a time per communicator
  uint64_t rounds = 0;
  std::vector<uint64_t> sent, received;  // messages per peer
  std::vector<std::unique_ptr<Segment>> segments;  // every rank's, by rank
};

struct Registry {
  std::mutex mutex;
  std::unordered_set<const Comm*> live;
  std::vector<c10::intrusive_ptr<c10d::TCPStore>> servers;  // kept for the process's lifetime
};

// One buffer argument of a call.
struct Buffer {
  const char* name;
  const void* ptr;
  uint64_t bytes;
};

// Where collective data travels: POSIX shared memory. Each rank of a
// communicator owns a segment (a header with the payload's size, then the
// payload) that every rank maps; a round writes the rank's contribution into
// its own segment and reads the others' in place. The store carries only
// small signals, so a collective costs a few store round trips plus memory
// copies, whatever its size. The segments' names are unlinked once every
// rank has mapped them: nothing is left in /dev/shm when a process dies.
constexpr size_t kHeaderBytes = 64;

struct Span {
  const uint8_t* data;
  size_t bytes;
};

struct Segment {
  int fd = -1;
  bool owned = false;  // the owner writes and grows it; the others only read
  uint8_t* base = nullptr;
  size_t mapped = 0;

  Segment() = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() {
    if (base != nullptr) munmap(base, mapped);
    if (fd >= 0) close(fd);
  }

  // Maps the whole file again if it grew since the last mapping; the owner
  // first grows it to hold `payload` bytes.
  void reserve(size_t payload) {
    const size_t need = kHeaderBytes + payload;
    if (owned && need > mapped) {
      const size_t size = std::max({need, 2 * mapped, size_t{1} << 20});
      if (ftruncate(fd, static_cast<off_t>(size)) != 0)
        throw std::runtime_error(cat("cannot grow a shared-memory segment to ", size, " bytes: ", std::strerror(errno)));
    }
    struct stat st {};
    if (fstat(fd, &st) != 0) throw std::runtime_error(cat("fstat of a shared-memory segment: ", std::strerror(errno)));
    const size_t size = static_cast<size_t>(st.st_size);
    if (size <= mapped) return;
    void* p = mmap(nullptr, size, owned ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) throw std::runtime_error(cat("cannot map ", size, " bytes of shared memory: ", std::strerror(errno)));
    if (base != nullptr) munmap(base, mapped);
    base = static_cast<uint8_t*>(p);
    mapped = size;
  }

  // The payload the owner wrote last.
  Span payload() {
    reserve(0);
    uint64_t bytes = 0;
    std::memcpy(&bytes, base, sizeof(bytes));
    if (kHeaderBytes + bytes > mapped) reserve(bytes);
    if (kHeaderBytes + bytes > mapped)
      throw std::runtime_error(cat("a shared-memory segment of ", mapped, " bytes holds a payload of ", bytes));
    return {base + kHeaderBytes, bytes};
  }
};

Registry& registry();

HcclResult hfail(HcclResult status, const std::string& message);

size_t elementSize(HcclDataType t);

// The checks every call makes before it queues work: live communicator,
// live stream, and the stream, current device and buffers on the
// communicator's device. Fills `allocs` with the buffers' allocations.
HcclResult validate(const char* fn, HcclComm handle, aclrtStream stream, std::initializer_list<Buffer> buffers,
                    Comm** out, std::vector<AllocInfo>& allocs);

HcclResult rejected(HcclResult status);

std::string segmentName(const std::string& id, const std::string& what);

int openSegment(const std::string& name, int flags);

// Waits for `keys`, one per rank in `ranks`; a timeout names the ranks that
// never set theirs (a rank that died or hangs).
void waitForRanks(Comm& comm, const std::vector<std::string>& keys, const std::vector<uint32_t>& ranks,
                  const std::string& what);

// Every rank's payload must have the size the caller expects of it.
void expectBytes(const std::vector<Span>& all, uint32_t rank, size_t bytes, const std::vector<uint32_t>& from);

// out = the reduction of every rank's payload from byte `offset` on, in rank
// order (so every rank gets the same bits).
void reduceRanks(const std::vector<Span>& all, size_t offset, void* out, uint64_t count, HcclDataType type,
                 HcclReduceOp op);

std::vector<uint32_t> everyRank(const Comm& comm);

// Runs `body` (which reads and writes the buffers) in the stream's order and
// turns store failures into HCCL statuses. The simulator runs a collective at
// the call, on the calling thread, once the stream's queued work is done (a
// drain; the host then counts as the buffers' last writer for the hazard
// tracker), so work queued afterwards sees its result and a failure is
// reported by the call itself. Real HCCL queues it on the stream instead.
template <class Body>
HcclResult run(const char* fn, Comm& comm, aclrtStream stream, const std::vector<AllocInfo>& allocs, Body&& body) {
  HcclResult status = HCCL_SUCCESS;
  std::lock_guard lock(comm.mutex);
  if (synchronizeStream(fn, stream) != ACL_SUCCESS) {
    counters().rejectedLaunches++;
    const char* why = aclGetRecentErrMsg();
    return hfail(HCCL_E_RUNTIME, cat(fn, ": earlier work on the stream failed: ", why != nullptr ? why : "?"));
  }
  std::vector<Access> accesses;
  for (const AllocInfo& a : allocs) accesses.push_back(Access{a, /*write=*/true});
  hostAccesses(accesses, fn);
  {
    AccessGrant grant;
    for (const AllocInfo& a : allocs) grant.add(a);
    try {
      body();
    } catch (const c10::DistStoreError& e) {
      status = hfail(HCCL_E_TIMEOUT, cat(fn, ": rank ", comm.rank, " of ", comm.size, " (device ", comm.device,
                                         ") gave up waiting for its peers after ", comm.timeout.count(),
                                         " ms (HCCL_EXEC_TIMEOUT): ", e.what_without_backtrace()));
    } catch (const c10::Error& e) {
      status = hfail(HCCL_E_REMOTE, cat(fn, ": rank ", comm.rank, " of ", comm.size, " (device ", comm.device,
                                        ") lost its peers: ", e.what_without_backtrace()));
    } catch (const std::exception& e) {
      status = hfail(HCCL_E_INTERNAL, cat(fn, ": ", e.what()));
    }
  }
  if (status == HCCL_SUCCESS) {
    Counters& c = counters();
    c.launches[comm.device]++;
    c.opLaunches(fn)++;
  } else {
    counters().rejectedLaunches++;
  }
  return status;
}

// One round: every rank writes `pieces` (concatenated) into its segment, then
// `consume` reads every rank's payload, in rank order. Store keys only
// signal: round/<k>/<rank> once a rank's payload is written, round/<k>/free
// once every rank has consumed round k; a rank waits for the latter before
// overwriting its segment in round k+1. The last rank to finish round k
// deletes round k-1's keys (every rank has waited for them by then).
template <class Consume>
void exchange(Comm& comm, std::initializer_list<Span> pieces, Consume&& consume) {
  c10d::Store& store = *comm.store;
  const uint64_t k = comm.rounds++;
  if (k > 0) {
    const std::string free = cat("round/", k - 1, "/free");
    try {
      store.wait({free}, comm.timeout);
    } catch (const c10::DistStoreError& e) {
      const int64_t done = store.add(cat("round/", k - 1, "/done"), 0);
      C10_THROW_ERROR(DistStoreError, cat("collective ", k - 1, " was finished by ", done, " of ", comm.size,
                                          " ranks only: ", e.what_without_backtrace()));
    }
  }
  uint64_t bytes = 0;
  for (const Span& piece : pieces) bytes += piece.bytes;
  Segment& mine = *comm.segments[comm.rank];
  mine.reserve(bytes);
  uint8_t* out = mine.base + kHeaderBytes;
  for (const Span& piece : pieces) {
    if (piece.bytes > 0) std::memcpy(out, piece.data, piece.bytes);
    out += piece.bytes;
  }
  std::memcpy(mine.base, &bytes, sizeof(bytes));
  store.set(cat("round/", k, "/", comm.rank), Bytes{});
  std::vector<std::string> keys;
  std::vector<uint32_t> ranks;
  for (uint32_t r = 0; r < comm.size; ++r) {
    keys.push_back(cat("round/", k, "/", r));
    ranks.push_back(r);
  }
  waitForRanks(comm, keys, ranks, cat("collective ", k));
  std::vector<Span> all;
  for (uint32_t r = 0; r < comm.size; ++r) all.push_back(comm.segments[r]->payload());
  consume(all);
  if (store.add(cat("round/", k, "/done"), 1) == static_cast<int64_t>(comm.size)) {
    store.set(cat("round/", k, "/free"), Bytes{});
    if (k > 0) {
      for (const std::string& key : keys) store.deleteKey(cat("round/", k - 1, key.substr(key.rfind('/'))));
      store.deleteKey(cat("round/", k - 1, "/done"));
      store.deleteKey(cat("round/", k - 1, "/free"));
    }
  }
}

#define FSIM_CHECK_TYPE(fn, t)                                                                 \
  do {                                                                                         \
    if (elementSize(t) == 0)                                                                   \
      return rejected(hfail(HCCL_E_NOT_SUPPORT, cat(fn, ": data type ", static_cast<int>(t),   \
                                                     " is not supported by the simulator")));  \
  } while (false)

#define FSIM_CHECK_OP(fn, op)                                                                          \
  do {                                                                                                 \
    if ((op) != HCCL_REDUCE_SUM && (op) != HCCL_REDUCE_PROD && (op) != HCCL_REDUCE_MAX &&              \
        (op) != HCCL_REDUCE_MIN)                                                                       \
      return rejected(hfail(HCCL_E_PARA, cat(fn, ": reduce op ", static_cast<int>(op), " is invalid"))); \
  } while (false)

}  // namespace fsim
