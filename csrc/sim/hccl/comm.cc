// The simulator's HCCL (libhccl): communicators and collectives across the
// processes of one machine, through shared memory, with torch's c10d
// TCPStore for rendezvous and signals. This file makes and queries
// communicators; collectives.cc runs the collectives, rounds.cc and
// hccl_internal.h hold what they share.
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

#include <fcntl.h>

#include <cstdlib>
#include <random>
#include <sstream>

#include "hccl_internal.h"

namespace fsim {
namespace {

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

}  // extern "C"
