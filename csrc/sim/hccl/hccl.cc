// The simulator's HCCL (libhccl): communicators and collectives across the
// processes of one machine, implemented on torch's c10d TCPStore.
//
// HcclGetRootInfo starts a TCPStore server in the calling process and writes
// its address (loopback host, port) and a fresh communicator id into the
// root info; HcclCommInitRootInfo connects a client to it. A collective is a
// round of the store: each rank sets its contribution under the
// communicator's next sequence number, waits for and reads the others', and
// computes its own result (reductions in rank order, so every rank gets the
// same bits); the last rank to finish a round deletes its keys. Values go in
// chunks of 4 MiB (the store's server refuses messages over 8 MiB). Send/recv use
// a key per (source, destination, message number). The store's timeout
// (HCCL_EXEC_TIMEOUT, seconds, as in CANN) bounds every wait, so a rank that
// died or hangs makes the others fail with HCCL_E_TIMEOUT (or a connection
// error when the store's host died) instead of hanging.
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

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
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

// TCPStore refuses a message over 8 MiB (its libuv server's payload limit):
// a value travels as chunks `key/0`, `key/1`, ... of at most 4 MiB, then
// `key` itself with the number of chunks, set last so that waiting for it
// means the whole value is there.
constexpr size_t kChunkBytes = size_t{4} << 20;

void putBytes(c10d::Store& store, const std::string& key, const uint8_t* data, size_t bytes) {
  const size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  for (size_t i = 0; i < chunks; ++i) {
    const size_t begin = i * kChunkBytes, end = std::min(bytes, begin + kChunkBytes);
    store.set(cat(key, "/", i), Bytes(data + begin, data + end));
  }
  const std::string count = std::to_string(chunks);
  store.set(key, Bytes(count.begin(), count.end()));
}

// Waits for a value of putBytes; returns it and its number of chunks.
Bytes getBytes(c10d::Store& store, const std::string& key, std::chrono::milliseconds timeout, size_t* chunks) {
  store.wait({key}, timeout);
  const Bytes header = store.get(key);
  *chunks = std::stoull(std::string(header.begin(), header.end()));
  Bytes value;
  for (size_t i = 0; i < *chunks; ++i) {
    const Bytes chunk = store.get(cat(key, "/", i));
    value.insert(value.end(), chunk.begin(), chunk.end());
  }
  return value;
}

void deleteBytes(c10d::Store& store, const std::string& key, size_t chunks) {
  for (size_t i = 0; i < chunks; ++i) store.deleteKey(cat(key, "/", i));
  store.deleteKey(key);
}

// One round: every rank contributes `mine` and gets every rank's
// contribution, in rank order. The last rank to finish deletes the round.
std::vector<Bytes> exchange(Comm& comm, const uint8_t* mine, size_t bytes) {
  const std::string round = cat("round/", comm.rounds++, "/");
  putBytes(*comm.store, round + std::to_string(comm.rank), mine, bytes);
  std::vector<Bytes> all(comm.size);
  std::vector<size_t> chunks(comm.size, 0);
  for (uint32_t r = 0; r < comm.size; ++r) all[r] = getBytes(*comm.store, round + std::to_string(r), comm.timeout, &chunks[r]);
  if (comm.store->add(round + "done", 1) == static_cast<int64_t>(comm.size)) {
    for (uint32_t r = 0; r < comm.size; ++r) deleteBytes(*comm.store, round + std::to_string(r), chunks[r]);
    comm.store->deleteKey(round + "done");
  }
  return all;
}

std::string newId() {
  std::random_device rd;
  std::ostringstream out;
  out << std::hex << rd() << rd() << rd() << rd();
  return out.str();
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

HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                         HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAllReduce";
  FSIM_CHECK_TYPE(fn, dataType);
  FSIM_CHECK_OP(fn, op);
  const uint64_t bytes = count * elementSize(dataType);
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes}, {"recvBuf", recvBuf, bytes}}, &c, allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    std::vector<Bytes> all = exchange(*c, static_cast<const uint8_t*>(sendBuf), bytes);
    Bytes acc = all[0];
    for (uint32_t r = 1; r < c->size; ++r) reduceInto(acc.data(), all[r].data(), count, dataType, op);
    std::memcpy(recvBuf, acc.data(), bytes);
  });
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
    std::vector<Bytes> all = exchange(*c, static_cast<const uint8_t*>(buf), c->rank == root ? bytes : 0);
    if (c->rank != root) std::memcpy(buf, all[root].data(), bytes);
  });
}

HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                             HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclReduceScatter";
  FSIM_CHECK_TYPE(fn, dataType);
  FSIM_CHECK_OP(fn, op);
  const uint64_t bytes = recvCount * elementSize(dataType);
  Comm* c0 = static_cast<Comm*>(comm);
  uint32_t size = 0;
  if (HcclResult s = HcclGetRankSize(comm, &size)) return rejected(s);
  (void)c0;
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {{"sendBuf", sendBuf, bytes * size}, {"recvBuf", recvBuf, bytes}}, &c,
                              allocs))
    return rejected(s);
  return run(fn, *c, stream, allocs, [&] {
    std::vector<Bytes> all = exchange(*c, static_cast<const uint8_t*>(sendBuf), bytes * c->size);
    Bytes acc(all[0].begin() + bytes * c->rank, all[0].begin() + bytes * (c->rank + 1));
    for (uint32_t r = 1; r < c->size; ++r) reduceInto(acc.data(), all[r].data() + bytes * c->rank, recvCount, dataType, op);
    std::memcpy(recvBuf, acc.data(), bytes);
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
    std::vector<Bytes> all = exchange(*c, static_cast<const uint8_t*>(sendBuf), bytes);
    for (uint32_t r = 0; r < c->size; ++r) std::memcpy(static_cast<uint8_t*>(recvBuf) + bytes * r, all[r].data(), bytes);
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
    std::vector<Bytes> all = exchange(*c, static_cast<const uint8_t*>(sendBuf), bytes * c->size);
    auto* out = static_cast<uint8_t*>(const_cast<void*>(recvBuf));
    for (uint32_t r = 0; r < c->size; ++r) std::memcpy(out + bytes * r, all[r].data() + bytes * c->rank, bytes);
  });
}

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
    putBytes(*c->store, cat("p2p/", c->rank, "-", destRank, "/", c->sent[destRank]++),
             static_cast<const uint8_t*>(sendBuf), bytes);
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
    const std::string key = cat("p2p/", srcRank, "-", c->rank, "/", c->received[srcRank]++);
    size_t chunks = 0;
    Bytes data = getBytes(*c->store, key, c->timeout, &chunks);
    deleteBytes(*c->store, key, chunks);
    if (data.size() != bytes)
      throw std::runtime_error(cat("rank ", srcRank, " sent ", data.size(), " bytes but rank ", c->rank,
                                   " receives ", bytes));
    std::memcpy(recvBuf, data.data(), bytes);
  });
}

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclBarrier";
  Comm* c = nullptr;
  std::vector<AllocInfo> allocs;
  if (HcclResult s = validate(fn, comm, stream, {}, &c, allocs)) return rejected(s);
  return run(fn, *c, stream, allocs, [&] { exchange(*c, nullptr, 0); });
}

}  // extern "C"
