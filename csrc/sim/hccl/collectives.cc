// The simulator's HCCL collectives and point-to-point messages: each call is
// validated like a kernel launch, then runs as rounds over shared memory
// (hccl_internal.h) in its stream's order.
#include <fcntl.h>

#include <optional>

#include "hccl_internal.h"

namespace fsim {
namespace {

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

// The checks of HcclSend and HcclRecv: their one buffer (`bytes` of it) on
// the stream's device, and a peer that is another rank of the communicator.
HcclResult validatePeer(const char* fn, HcclComm comm, aclrtStream stream, Buffer buffer, const char* peerName,
                        uint32_t peer, Comm** c, std::vector<AllocInfo>& allocs) {
  if (HcclResult s = validate(fn, comm, stream, {buffer}, c, allocs)) return s;
  if (peer >= (*c)->size || peer == (*c)->rank)
    return hfail(HCCL_E_PARA, cat(fn, ": ", peerName, " ", peer, " (rank ", (*c)->rank, " of ", (*c)->size, ")"));
  return HCCL_SUCCESS;
}

}  // namespace
}  // namespace fsim

using namespace fsim;

extern "C" {

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
  if (HcclResult s = validatePeer(fn, comm, stream, {"sendBuf", sendBuf, bytes}, "destRank", destRank, &c, allocs))
    return rejected(s);
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
  if (HcclResult s = validatePeer(fn, comm, stream, {"recvBuf", recvBuf, bytes}, "srcRank", srcRank, &c, allocs))
    return rejected(s);
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
