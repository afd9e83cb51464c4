// The simulator's HCCL (libhccl): communicators and collectives across the
// processes of one machine, through shared memory, with torch's c10d
// TCPStore for rendezvous and signals.
//
// HcclGetRootInfo starts a TCPStore server in the calling process and writes
// its address (loopback host, port) and a fresh communicator id into the
// root info; HcclCommInitRootInfo connects a client to it and maps every
// rank's shared-memory segment. A collective is a round: each rank writes its
// contribution into its own segment, signals it through the store, reads the
// others' in place and computes its own result (reductions in rank order, so
// every rank gets the same bits). Send/recv use a segment per message. The
// store's timeout (HCCL_EXEC_TIMEOUT, seconds, as in CANN) bounds every
// wait, so a rank that died or hangs makes the others fail with
// HCCL_E_TIMEOUT, naming the ranks that never arrived (or a connection error
// when the store's host died) instead of hanging.
//
// Like a kernel launch, every call is validated first: the communicator
// belongs to the device that was current when it was created, and the
// stream, the calling thread's current device and every buffer must be on
// that device (HCCL_E_RUNTIME for the context, HCCL_E_PARA for a buffer;
// aclGetRecentErrMsg() says which). The work then runs on the stream (the
// simulator's streams run work as it is queued, so it is ordered with the
// kernels queued before and after it).
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "../runtime/runtime.h"
#include "flagos/hccl_api.h"

namespace fsim {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr const char* kRootInfoTag = "flagos-sim-hccl/1";

std::chrono::milliseconds envSeconds(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0) return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  return std::chrono::milliseconds(fallback * 1000LL);
}

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
Registry& registry() {
  static Registry* r = new Registry;  // leaked: other ranks may still talk to a server during exit
  return *r;
}

HcclResult hfail(HcclResult status, const std::string& message) {
  setError(message);
  return status;
}

size_t elementSize(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64: return 8;
    default: return 0;
  }
}

template <class T, class Acc>
void reduceTyped(uint8_t* acc, const uint8_t* in, uint64_t count, HcclReduceOp op) {
  auto* a = reinterpret_cast<T*>(acc);
  const auto* b = reinterpret_cast<const T*>(in);
  for (uint64_t i = 0; i < count; ++i) {
    const Acc x = static_cast<Acc>(a[i]), y = static_cast<Acc>(b[i]);
    Acc r = x;
    switch (op) {
      case HCCL_REDUCE_SUM: r = x + y; break;
      case HCCL_REDUCE_PROD: r = x * y; break;
      case HCCL_REDUCE_MAX: r = std::max(x, y); break;
      case HCCL_REDUCE_MIN: r = std::min(x, y); break;
      default: break;
    }
    a[i] = static_cast<T>(r);
  }
}

// acc = acc (op) in, elementwise.
bool reduceInto(uint8_t* acc, const uint8_t* in, uint64_t count, HcclDataType t, HcclReduceOp op) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: reduceTyped<int8_t, int8_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT8: reduceTyped<uint8_t, uint8_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_INT16: reduceTyped<int16_t, int16_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT16: reduceTyped<uint16_t, uint16_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_INT32: reduceTyped<int32_t, int32_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT32: reduceTyped<uint32_t, uint32_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_INT64: reduceTyped<int64_t, int64_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT64: reduceTyped<uint64_t, uint64_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_FP16: reduceTyped<c10::Half, float>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_BFP16: reduceTyped<c10::BFloat16, float>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_FP32: reduceTyped<float, float>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_FP64: reduceTyped<double, double>(acc, in, count, op); return true;
    default: return false;
  }
}

// One buffer argument of a call.
struct Buffer {
  const char* name;
  const void* ptr;
  uint64_t bytes;
};

// The checks every call makes before it queues work: live communicator,
// live stream, and the stream, current device and buffers on the
// communicator's device. Fills `allocs` with the buffers' allocations.
HcclResult validate(const char* fn, HcclComm handle, aclrtStream stream, std::initializer_list<Buffer> buffers,
                    Comm** out, std::vector<AllocInfo>& allocs) {
  Comm* comm = static_cast<Comm*>(handle);
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (comm == nullptr) return hfail(HCCL_E_PTR, cat(fn, ": comm is nullptr"));
    if (!r.live.contains(comm)) return hfail(HCCL_E_PARA, cat(fn, ": comm ", handle, " is not a live communicator"));
  }
  const std::string where = cat("the communicator (rank ", comm->rank, " of ", comm->size, ") belongs to device ",
                                comm->device);
  std::optional<int> streamDev = streamDevice(stream);
  if (!streamDev) return hfail(HCCL_E_PARA, cat(fn, ": stream ", stream, " is not a live stream"));
  const int current = currentDevice();
  if (current != comm->device)
    return hfail(HCCL_E_RUNTIME, cat(fn, ": the current device is ", current, " but ", where));
  if (*streamDev != comm->device)
    return hfail(HCCL_E_RUNTIME, cat(fn, ": the stream belongs to device ", *streamDev, " but ", where));
  for (const Buffer& b : buffers) {
    if (b.bytes == 0) continue;
    if (b.ptr == nullptr) return hfail(HCCL_E_PTR, cat(fn, ": ", b.name, " is nullptr"));
    std::optional<AllocInfo> a = findAlloc(b.ptr);
    if (!a) return hfail(HCCL_E_PARA, cat(fn, ": ", b.name, " (", b.ptr, ") is not device memory; ", where));
    if (a->device != comm->device)
      return hfail(HCCL_E_PARA, cat(fn, ": ", b.name, " lives on device ", a->device, " but ", where));
    if (!a->contains(reinterpret_cast<uintptr_t>(b.ptr), b.bytes))
      return hfail(HCCL_E_PARA, cat(fn, ": ", b.name, " (", b.bytes, " bytes at ", b.ptr, ") overruns its allocation of ",
                                    a->size, " bytes"));
    allocs.push_back(*a);
  }
  *out = comm;
  return HCCL_SUCCESS;
}

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

HcclResult rejected(HcclResult status) {
  counters().rejectedLaunches++;
  return status;
}

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

std::string segmentName(const std::string& id, const std::string& what) { return cat("/flagos_hccl_", id, "_", what); }

int openSegment(const std::string& name, int flags) {
  const int fd = shm_open(name.c_str(), flags, 0600);
  if (fd < 0) throw std::runtime_error(cat("shm_open(", name, "): ", std::strerror(errno)));
  return fd;
}

// Waits for `keys`, one per rank in `ranks`; a timeout names the ranks that
// never set theirs (a rank that died or hangs).
void waitForRanks(Comm& comm, const std::vector<std::string>& keys, const std::vector<uint32_t>& ranks,
                  const std::string& what) {
  try {
    comm.store->wait(keys, comm.timeout);
  } catch (const c10::DistStoreError& e) {
    std::string missing;
    for (size_t i = 0; i < keys.size(); ++i) {
      bool there = false;
      try {
        there = comm.store->check({keys[i]});
      } catch (const std::exception&) {
      }
      if (!there) missing += cat(missing.empty() ? "" : ", ", ranks[i]);
    }
    C10_THROW_ERROR(DistStoreError, cat(what, ": rank(s) ", missing, " never arrived: ", e.what_without_backtrace()));
  }
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

// Every rank's payload must have the size the caller expects of it.
void expectBytes(const std::vector<Span>& all, uint32_t rank, size_t bytes, const std::vector<uint32_t>& from) {
  for (uint32_t r : from)
    if (all[r].bytes != bytes)
      throw std::runtime_error(cat("rank ", r, " contributed ", all[r].bytes, " bytes but rank ", rank, " expects ",
                                   bytes, " (counts or dtypes differ between ranks)"));
}

// out = the reduction of every rank's payload from byte `offset` on, in rank
// order (so every rank gets the same bits).
void reduceRanks(const std::vector<Span>& all, size_t offset, void* out, uint64_t count, HcclDataType type,
                 HcclReduceOp op) {
  auto* acc = static_cast<uint8_t*>(out);
  std::memcpy(acc, all[0].data + offset, count * elementSize(type));
  for (size_t r = 1; r < all.size(); ++r) reduceInto(acc, all[r].data + offset, count, type, op);
}

std::vector<uint32_t> everyRank(const Comm& comm) {
  std::vector<uint32_t> ranks(comm.size);
  for (uint32_t r = 0; r < comm.size; ++r) ranks[r] = r;
  return ranks;
}

std::string newId() {
  std::random_device rd;
  std::ostringstream out;
  out << std::hex << rd() << rd() << rd() << rd();
  return out.str();
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

// HcclAllReduce (every rank gets the result) and HcclReduce (only `root`).
HcclResult reduceTo(const char* fn, void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                    HcclReduceOp op, std::optional<uint32_t> root, HcclComm comm, aclrtStream stream) {
  FSIM_CHECK_TYPE(fn, dataType);
  FSIM_CHECK_OP(fn, op);
  const uint64_t bytes = count * elementSize(dataType);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes}, {"recvBuf", recvBuf, bytes}}, &c, allocs))
    return rejected(s);
  if (root && *root >= c->size) return rejected(hfail(HCCL_E_PARA, cat(fn, ": root ", *root, " of ", c->size, " ranks")));
  return run(fn, *c, stream, allocs, [&] {
    exchange(*c, {{static_cast<const uint8_t*>(sendBuf), bytes}}, [&](const std::vector<Span>& all) {
      expectBytes(all, c->rank, bytes, everyRank(*c));
      if (!root || c->rank == *root) reduceRanks(all, 0, recvBuf, count, dataType, op);
    });
  });
}
}  // namespace
}  // namespace fsim

using namespace fsim;

extern "C" {

HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
  if (rootInfo == nullptr) return hfail(HCCL_E_PTR, "HcclGetRootInfo: rootInfo is nullptr");
  try {
    c10d::TCPStoreOptions opts;
    opts.port = 0;
    opts.isServer = true;
    opts.waitWorkers = false;
    opts.timeout = envSeconds("HCCL_CONNECT_TIMEOUT", 120);
    auto server = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", opts);
    const std::string text = cat(kRootInfoTag, " 127.0.0.1 ", server->getPort(), " ", newId());
    std::memset(rootInfo->internal, 0, sizeof(rootInfo->internal));
    std::memcpy(rootInfo->internal, text.c_str(), text.size());
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.servers.push_back(std::move(server));
  } catch (const std::exception& e) {
    return hfail(HCCL_E_TCP_CONNECT, cat("HcclGetRootInfo: cannot start the root's store: ", e.what()));
  }
  return HCCL_SUCCESS;
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, HcclComm* comm) {
  const char* fn = "HcclCommInitRootInfo";
  if (rootInfo == nullptr || comm == nullptr) return hfail(HCCL_E_PTR, cat(fn, ": rootInfo or comm is nullptr"));
  if (nRanks == 0 || rank >= nRanks) return hfail(HCCL_E_PARA, cat(fn, ": rank ", rank, " of ", nRanks, " ranks"));
  const int device = currentDevice();
  if (device < 0)
    return hfail(HCCL_E_RUNTIME, cat(fn, ": the calling thread has no current device (call aclrtSetDevice first)"));
  std::string text(rootInfo->internal, strnlen(rootInfo->internal, sizeof(rootInfo->internal)));
  std::istringstream in(text);
  std::string tag, host, id;
  int port = -1;
  in >> tag >> host >> port >> id;
  if (tag != kRootInfoTag || port <= 0 || id.empty())
    return hfail(HCCL_E_PARA, cat(fn, ": rootInfo was not made by HcclGetRootInfo"));
  auto c = std::make_unique<Comm>();
  c->device = device;
  c->rank = rank;
  c->size = nRanks;
  c->id = id;
  c->timeout = envSeconds("HCCL_EXEC_TIMEOUT", 300);
  c->sent.assign(nRanks, 0);
  c->received.assign(nRanks, 0);
  try {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(port);
    opts.isServer = false;
    opts.waitWorkers = false;
    opts.timeout = envSeconds("HCCL_CONNECT_TIMEOUT", 120);
    auto client = c10::make_intrusive<c10d::TCPStore>(host, opts);
    c->store = c10::make_intrusive<c10d::PrefixStore>("hccl/" + id, client);
    // Rendezvous: every rank of the communicator checks in once.
    if (c->store->add(cat("init/rank", rank), 1) != 1)
      return hfail(HCCL_E_PARA, cat(fn, ": rank ", rank, " joined communicator ", id, " twice"));
    const std::string size = std::to_string(nRanks);
    c->store->set(cat("init/size", rank), Bytes(size.begin(), size.end()));
    std::vector<std::string> keys;
    for (uint32_t r = 0; r < nRanks; ++r) keys.push_back(cat("init/size", r));
    c->store->wait(keys, opts.timeout);
    for (uint32_t r = 0; r < nRanks; ++r) {
      const Bytes other = c->store->get(keys[r]);
      if (std::string(other.begin(), other.end()) != size)
        return hfail(HCCL_E_PARA, cat(fn, ": rank ", rank, " was given nRanks ", nRanks, " but rank ", r, " ",
                                      std::string(other.begin(), other.end())));
    }
    // Shared memory: each rank creates its segment, maps every rank's, and
    // unlinks its name once all have mapped it.
    c->segments.resize(nRanks);
    c->segments[rank] = std::make_unique<Segment>();
    c->segments[rank]->owned = true;
    c->segments[rank]->fd = openSegment(segmentName(id, std::to_string(rank)), O_CREAT | O_EXCL | O_RDWR);
    c->segments[rank]->reserve(0);
    c->store->set(cat("init/segment", rank), Bytes{});
    keys.clear();
    for (uint32_t r = 0; r < nRanks; ++r) keys.push_back(cat("init/segment", r));
    c->store->wait(keys, opts.timeout);
    for (uint32_t r = 0; r < nRanks; ++r) {
      if (r == rank) continue;
      c->segments[r] = std::make_unique<Segment>();
      c->segments[r]->fd = openSegment(segmentName(id, std::to_string(r)), O_RDONLY);
    }
    c->store->set(cat("init/mapped", rank), Bytes{});
    keys.clear();
    for (uint32_t r = 0; r < nRanks; ++r) keys.push_back(cat("init/mapped", r));
    c->store->wait(keys, opts.timeout);
    shm_unlink(segmentName(id, std::to_string(rank)).c_str());
    c->store->setTimeout(c->timeout);
  } catch (const c10::DistStoreError& e) {
    return hfail(HCCL_E_TIMEOUT, cat(fn, ": rank ", rank, " of ", nRanks, " waited for the other ranks: ",
                                     e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return hfail(HCCL_E_TCP_CONNECT, cat(fn, ": cannot reach the root at ", host, ":", port, ": ", e.what()));
  }
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.live.insert(c.get());
  *comm = c.release();
  return HCCL_SUCCESS;
}

HcclResult HcclCommDestroy(HcclComm comm) {
  Comm* c = static_cast<Comm*>(comm);
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (c == nullptr) return hfail(HCCL_E_PTR, "HcclCommDestroy: comm is nullptr");
    if (r.live.erase(c) == 0) return hfail(HCCL_E_PARA, cat("HcclCommDestroy: comm ", comm, " is not live"));
  }
  delete c;
  return HCCL_SUCCESS;
}

HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (comm == nullptr || rankSize == nullptr) return hfail(HCCL_E_PTR, "HcclGetRankSize: nullptr argument");
  if (!r.live.contains(static_cast<Comm*>(comm))) return hfail(HCCL_E_PARA, "HcclGetRankSize: comm is not live");
  *rankSize = static_cast<Comm*>(comm)->size;
  return HCCL_SUCCESS;
}

HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (comm == nullptr || rank == nullptr) return hfail(HCCL_E_PTR, "HcclGetRankId: nullptr argument");
  if (!r.live.contains(static_cast<Comm*>(comm))) return hfail(HCCL_E_PARA, "HcclGetRankId: comm is not live");
  *rank = static_cast<Comm*>(comm)->rank;
  return HCCL_SUCCESS;
}


HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                         HcclComm comm, aclrtStream stream) {
  return reduceTo("HcclAllReduce", sendBuf, recvBuf, count, dataType, op, std::nullopt, comm, stream);
}

HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                      uint32_t root, HcclComm comm, aclrtStream stream) {
  return reduceTo("HcclReduce", sendBuf, recvBuf, count, dataType, op, root, comm, stream);
}

HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                         aclrtStream stream) {
  const char* fn = "HcclBroadcast";
  FSIM_CHECK_TYPE(fn, dataType);
  const uint64_t bytes = count * elementSize(dataType);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"buf", buf, bytes}}, &c, allocs)) return rejected(s);
  if (root >= c->size) return rejected(hfail(HCCL_E_PARA, cat(fn, ": root ", root, " of ", c->size, " ranks")));
  return run(fn, *c, stream, allocs, [&] {
    // Every rank takes part in the round; only the root's bytes are read.
    const Span mine{static_cast<const uint8_t*>(buf), c->rank == root ? bytes : 0};
    exchange(*c, {mine}, [&](const std::vector<Span>& all) {
      expectBytes(all, c->rank, bytes, {root});
      if (c->rank != root) std::memcpy(buf, all[root].data, bytes);
    });
  });
}

HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType, uint32_t root,
                       HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclScatter";
  FSIM_CHECK_TYPE(fn, dataType);
  const uint64_t bytes = recvCount * elementSize(dataType);
  uint32_t size = 0, rank = 0;
  if (HcclResult s = HcclGetRankSize(comm, &size)) return rejected(s);
  if (HcclResult s = HcclGetRankId(comm, &rank)) return rejected(s);
  if (root >= size) return rejected(hfail(HCCL_E_PARA, cat(fn, ": root ", root, " of ", size, " ranks")));
  // Only the root's sendBuf is read.
  const uint64_t sendBytes = rank == root ? bytes * size : 0;
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, sendBytes}, {"recvBuf", recvBuf, bytes}}, &c,
                              allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    exchange(*c, {{static_cast<const uint8_t*>(sendBuf), sendBytes}}, [&](const std::vector<Span>& all) {
      expectBytes(all, c->rank, bytes * c->size, {root});
      std::memcpy(recvBuf, all[root].data + bytes * c->rank, bytes);
    });
  });
}

HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                             HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclReduceScatter";
  FSIM_CHECK_TYPE(fn, dataType);
  FSIM_CHECK_OP(fn, op);
  const uint64_t bytes = recvCount * elementSize(dataType);
  uint32_t size = 0;
  if (HcclResult s = HcclGetRankSize(comm, &size)) return rejected(s);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes * size}, {"recvBuf", recvBuf, bytes}}, &c,
                              allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    exchange(*c, {{static_cast<const uint8_t*>(sendBuf), bytes * c->size}}, [&](const std::vector<Span>& all) {
      expectBytes(all, c->rank, bytes * c->size, everyRank(*c));
      reduceRanks(all, bytes * c->rank, recvBuf, recvCount, dataType, op);
    });
  });
}

HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType, HcclComm comm,
                         aclrtStream stream) {
  const char* fn = "HcclAllGather";
  FSIM_CHECK_TYPE(fn, dataType);
  const uint64_t bytes = sendCount * elementSize(dataType);
  uint32_t size = 0;
  if (HcclResult s = HcclGetRankSize(comm, &size)) return rejected(s);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes}, {"recvBuf", recvBuf, bytes * size}}, &c,
                              allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    exchange(*c, {{static_cast<const uint8_t*>(sendBuf), bytes}}, [&](const std::vector<Span>& all) {
      expectBytes(all, c->rank, bytes, everyRank(*c));
      for (uint32_t r = 0; r < c->size; ++r) std::memcpy(static_cast<uint8_t*>(recvBuf) + bytes * r, all[r].data, bytes);
    });
  });
}

HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType, const void* recvBuf,
                        uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAlltoAll";
  FSIM_CHECK_TYPE(fn, sendType);
  if (sendType != recvType || sendCount != recvCount)
    return rejected(hfail(HCCL_E_PARA, cat(fn, ": sendType/sendCount (", static_cast<int>(sendType), "/", sendCount,
                                           ") differ from recvType/recvCount (", static_cast<int>(recvType), "/",
                                           recvCount, ")")));
  const uint64_t bytes = sendCount * elementSize(sendType);
  uint32_t size = 0;
  if (HcclResult s = HcclGetRankSize(comm, &size)) return rejected(s);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes * size}, {"recvBuf", recvBuf, bytes * size}},
                              &c, allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    exchange(*c, {{static_cast<const uint8_t*>(sendBuf), bytes * c->size}}, [&](const std::vector<Span>& all) {
      expectBytes(all, c->rank, bytes * c->size, everyRank(*c));
      auto* out = static_cast<uint8_t*>(const_cast<void*>(recvBuf));
      for (uint32_t r = 0; r < c->size; ++r) std::memcpy(out + bytes * r, all[r].data + bytes * c->rank, bytes);
    });
  });
}

HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls, HcclDataType sendType,
                         const void* recvBuf, const void* recvCounts, const void* rdispls, HcclDataType recvType,
                         HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAlltoAllV";
  FSIM_CHECK_TYPE(fn, sendType);
  if (sendType != recvType)
    return rejected(hfail(HCCL_E_PARA, cat(fn, ": sendType ", static_cast<int>(sendType), " differs from recvType ",
                                           static_cast<int>(recvType))));
  if (sendCounts == nullptr || sdispls == nullptr || recvCounts == nullptr || rdispls == nullptr)
    return rejected(hfail(HCCL_E_PTR, cat(fn, ": a count or displacement array is nullptr")));
  uint32_t size = 0;
  if (HcclResult s = HcclGetRankSize(comm, &size)) return rejected(s);
  const size_t element = elementSize(sendType);
  const auto* sc = static_cast<const uint64_t*>(sendCounts);
  const auto* sd = static_cast<const uint64_t*>(sdispls);
  const auto* rc = static_cast<const uint64_t*>(recvCounts);
  const auto* rd = static_cast<const uint64_t*>(rdispls);
  uint64_t sendExtent = 0, recvExtent = 0;  // elements each buffer must hold
  for (uint32_t r = 0; r < size; ++r) {
    if (sc[r] > 0) sendExtent = std::max(sendExtent, sd[r] + sc[r]);
    if (rc[r] > 0) recvExtent = std::max(recvExtent, rd[r] + rc[r]);
  }
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream,
                              {{"sendBuf", sendBuf, sendExtent * element}, {"recvBuf", recvBuf, recvExtent * element}},
                              &c, allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    // The payload: a table of (offset, bytes) per destination, then the
    // pieces for each destination one after the other.
    std::vector<uint64_t> table(2 * size);
    std::vector<uint8_t> packed;
    for (uint32_t r = 0; r < size; ++r) {
      table[2 * r] = packed.size();
      table[2 * r + 1] = sc[r] * element;
      const auto* from = static_cast<const uint8_t*>(sendBuf) + sd[r] * element;
      packed.insert(packed.end(), from, from + sc[r] * element);
    }
    const Span header{reinterpret_cast<const uint8_t*>(table.data()), table.size() * sizeof(uint64_t)};
    exchange(*c, {header, {packed.data(), packed.size()}}, [&](const std::vector<Span>& all) {
      auto* out = static_cast<uint8_t*>(const_cast<void*>(recvBuf));
      for (uint32_t r = 0; r < size; ++r) {
        uint64_t entry[2];
        std::memcpy(entry, all[r].data + 2 * c->rank * sizeof(uint64_t), sizeof(entry));
        if (entry[1] != rc[r] * element)
          throw std::runtime_error(cat("rank ", r, " sends ", entry[1] / element, " elements to rank ", c->rank,
                                       ", which expects ", rc[r]));
        if (entry[1] > 0) std::memcpy(out + rd[r] * element, all[r].data + header.bytes + entry[0], entry[1]);
      }
    });
  });
}

// Point-to-point messages go through a shared-memory segment per message,
// named by (communicator, source, destination, message number): the sender
// writes it and signals its size through the store; the receiver copies it
// out and unlinks it.
HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                    aclrtStream stream) {
  const char* fn = "HcclSend";
  FSIM_CHECK_TYPE(fn, dataType);
  const uint64_t bytes = count * elementSize(dataType);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes}}, &c, allocs)) return rejected(s);
  if (destRank >= c->size || destRank == c->rank)
    return rejected(hfail(HCCL_E_PARA, cat(fn, ": destRank ", destRank, " (rank ", c->rank, " of ", c->size, ")")));
  return run(fn, *c, stream, allocs, [&] {
    const std::string message = cat(c->rank, "-", destRank, "-", c->sent[destRank]++);
    const std::string name = segmentName(c->id, "p2p" + message);
    const int fd = openSegment(name, O_CREAT | O_EXCL | O_RDWR);
    bool written = false;
    if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
      void* p = bytes > 0 ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : nullptr;
      if (p != MAP_FAILED) {
        if (bytes > 0) {
          std::memcpy(p, sendBuf, bytes);
          munmap(p, bytes);
        }
        written = true;
      }
    }
    close(fd);
    if (!written) {
      shm_unlink(name.c_str());
      throw std::runtime_error(cat("cannot write ", bytes, " bytes of shared memory: ", std::strerror(errno)));
    }
    const std::string size = std::to_string(bytes);
    c->store->set("p2p/" + message, Bytes(size.begin(), size.end()));
  });
}

HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                    aclrtStream stream) {
  const char* fn = "HcclRecv";
  FSIM_CHECK_TYPE(fn, dataType);
  const uint64_t bytes = count * elementSize(dataType);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"recvBuf", recvBuf, bytes}}, &c, allocs)) return rejected(s);
  if (srcRank >= c->size || srcRank == c->rank)
    return rejected(hfail(HCCL_E_PARA, cat(fn, ": srcRank ", srcRank, " (rank ", c->rank, " of ", c->size, ")")));
  return run(fn, *c, stream, allocs, [&] {
    const std::string message = cat(srcRank, "-", c->rank, "-", c->received[srcRank]++);
    const std::string key = "p2p/" + message;
    waitForRanks(*c, {key}, {srcRank}, cat("message ", message));
    const Bytes header = c->store->get(key);
    c->store->deleteKey(key);
    const uint64_t sent = std::stoull(std::string(header.begin(), header.end()));
    const std::string name = segmentName(c->id, "p2p" + message);
    const int fd = openSegment(name, O_RDONLY);
    shm_unlink(name.c_str());
    void* p = sent > 0 ? mmap(nullptr, sent, PROT_READ, MAP_SHARED, fd, 0) : nullptr;
    close(fd);
    if (p == MAP_FAILED) throw std::runtime_error(cat("cannot map a message of ", sent, " bytes: ", std::strerror(errno)));
    if (sent == bytes && bytes > 0) std::memcpy(recvBuf, p, bytes);
    if (p != nullptr) munmap(p, sent);
    if (sent != bytes)
      throw std::runtime_error(cat("rank ", srcRank, " sent ", sent, " bytes but rank ", c->rank, " receives ", bytes));
  });
}

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclBarrier";
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {}, &c, allocs)) return rejected(s);
  return run(fn, *c, stream, allocs, [&] { exchange(*c, {}, [](const std::vector<Span>&) {}); });
}

}  // extern "C"
