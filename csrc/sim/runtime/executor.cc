// Executors (built by an operator's phase 1) and the validated launch that
// every operator's phase 2 goes through.
//
// Phase 2 validates on the calling thread (a rejected launch fails there)
// and queues the kernel on the stream. The queued kernel runs on a copy of
// the executor taken at launch, with the tensor addresses of that moment:
// rebinding a repeatable executor (aclSetInputTensorAddr) after the launch
// changes later launches only, as on CANN, where the launch has captured its
// arguments. A kernel that fails when it runs (an ATen error, an injected
// phase-3 fault) fails the stream: the next synchronization reports
// ACL_ERROR_RT_AICORE_EXCEPTION with the kernel's message.
#include <atomic>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_set>

#include "runtime.h"

namespace fsim {
namespace {

struct Executors {
  std::mutex mutex;
  std::unordered_set<const aclOpExecutor*> live;
};

Executors& executors() {
  static Executors* e = new Executors;  // leaked: threads may launch during exit
  return *e;
}

// Where a tensor's elements lie, in bytes from its storage start.
struct Extent {
  bool empty = false;     // no elements: nothing to place or check
  bool overflow = false;  // the extent does not fit in 64 bits
  uint64_t begin = 0;
  uint64_t end = 0;
};

Extent extentOf(const aclTensor& t) {
  Extent e;
  uint64_t last = static_cast<uint64_t>(t.offset);  // element index of the last element
  for (size_t i = 0; i < t.viewDims.size(); ++i) {
    if (t.viewDims[i] == 0) {
      e.empty = true;
      return e;
    }
    uint64_t step = 0;
    e.overflow |= __builtin_mul_overflow(static_cast<uint64_t>(t.viewDims[i] - 1),
                                         static_cast<uint64_t>(t.strides[i]), &step);
    e.overflow |= __builtin_add_overflow(last, step, &last);
  }
  uint64_t item = dtypeSize(t.dtype);
  e.overflow |= __builtin_mul_overflow(static_cast<uint64_t>(t.offset), item, &e.begin);
  e.overflow |= __builtin_mul_overflow(last + 1, item, &e.end);
  return e;
}

// Writes what a mismatched launch leaves in an output on real hardware (as
// simulated): NaN in every floating-point element, 0xFF bytes otherwise.
void poison(const aclTensor& t) {
  size_t item = dtypeSize(t.dtype);
  unsigned char pattern[16];
  std::memset(pattern, 0xFF, sizeof(pattern));
  auto put = [&](auto nanBits) {  // complex types get NaN in both parts
    for (size_t at = 0; at < sizeof(pattern); at += sizeof(nanBits))
      std::memcpy(pattern + at, &nanBits, sizeof(nanBits));
  };
  switch (t.dtype) {
    case ACL_FLOAT:
    case ACL_COMPLEX64: put(uint32_t{0x7FC00000}); break;
    case ACL_DOUBLE:
    case ACL_COMPLEX128: put(uint64_t{0x7FF8000000000000}); break;
    case ACL_FLOAT16:
    case ACL_COMPLEX32: put(uint16_t{0x7E00}); break;
    case ACL_BF16: put(uint16_t{0x7FC0}); break;
    default: break;
  }
  const size_t rank = t.viewDims.size();
  std::vector<int64_t> index(rank, 0);
  auto* storage = static_cast<unsigned char*>(t.data);
  while (true) {
    int64_t element = t.offset;
    for (size_t d = 0; d < rank; ++d) element += index[d] * t.strides[d];
    std::memcpy(storage + element * item, pattern, item);
    size_t d = rank;
    while (d > 0 && ++index[d - 1] == t.viewDims[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

// The outcome of checking where a launch's pieces live.
struct Verdict {
  aclnnStatus hardStatus = ACLNN_SUCCESS;  // invalid whatever the mismatch mode
  std::string hardError;
  std::string mismatch;  // first device mismatch; the mode decides
  std::vector<Access> accesses;  // what the kernel reads and writes (the workspace is written)
  std::vector<std::pair<const aclTensor*, AllocInfo>> outputs;  // placed outputs, for poisoning

  // Empties it for the next launch, keeping the vectors' capacity.
  void reset() {
    hardStatus = ACLNN_SUCCESS;
    hardError.clear();
    mismatch.clear();
    accesses.clear();
    outputs.clear();
  }

  void touch(const AllocInfo& a, bool write) {
    for (Access& x : accesses) {
      if (x.alloc.id == a.id) {
        x.write = x.write || write;
        return;
      }
    }
    accesses.push_back({a, write});
  }
};

// Fills `v` (reset) with where the launch's pieces live.
void validate(Verdict& v, const char* op, const aclOpExecutor& e, void* workspace, uint64_t workspaceSize,
              aclrtStream stream) {
  auto hard = [&](aclnnStatus status, std::string message) {
    if (v.hardStatus == ACLNN_SUCCESS) {
      v.hardStatus = status;
      v.hardError = std::move(message);
    }
  };
  auto mismatch = [&](auto&&... parts) {
    if (v.mismatch.empty()) v.mismatch = cat(op, ": ", parts...);
  };
  std::optional<int> streamDev = streamDevice(stream);
  if (!streamDev) {
    hard(ACLNN_ERR_PARAM_INVALID, cat(op, ": stream ", stream, " is not a live stream"));
    return;
  }
  const int current = currentDevice();
  auto runsOn = [&] {
    return cat("the launch runs on device ", current, " (current device ", current, ", stream of device ",
               *streamDev, ")");
  };
  if (current < 0)
    mismatch("the calling thread has no current device (call aclrtSetDevice first)");
  else if (*streamDev != current)
    mismatch("the stream belongs to device ", *streamDev, " but the launch runs on device ", current,
             " (current device ", current, ")");

  const AllocLookup memory;    // both locks for the whole check: one acquisition each
  const TensorLookup objects;  // rather than one per argument
  if (workspaceSize < e.workspaceSize)
    hard(ACLNN_ERR_PARAM_INVALID, cat(op, ": workspaceSize ", workspaceSize, " is smaller than the ",
                                      e.workspaceSize, " bytes ", op, "GetWorkspaceSize asked for"));
  if (workspaceSize > 0 && workspace != nullptr) {
    std::optional<AllocInfo> a = memory.find(workspace);
    if (!a) {
      mismatch("the workspace (", workspace, ") is not device memory; ", runsOn());
    } else if (!a->contains(reinterpret_cast<uintptr_t>(workspace), workspaceSize)) {
      hard(ACLNN_ERR_PARAM_INVALID, cat(op, ": the workspace of ", workspaceSize, " bytes at ", workspace,
                                        " overruns its allocation of ", a->size, " bytes"));
    } else {
      if (a->device != current) mismatch("the workspace lives on device ", a->device, " but ", runsOn());
      v.touch(*a, true);
    }
  }

  for (const Param& p : e.params) {
    for (size_t i = 0; i < p.tensors.size(); ++i) {
      const BoundTensor& bound = p.tensors[i];
      if (bound.tensor == nullptr) continue;  // absent optional tensor
      auto label = [&] { return p.isList ? cat(p.name, "[", i, "]") : p.name; };
      if (!objects.live(bound.tensor, bound.serial)) {
        hard(ACLNN_ERR_PARAM_INVALID,
             cat(op, ": argument '", label(), "' (aclTensor ", static_cast<const void*>(bound.tensor),
                 ") was destroyed after phase 1; the executor reads the aclTensor objects it was built with until "
                 "it is launched (or, if repeatable, destroyed)"));
        continue;
      }
      const aclTensor& t = *bound.tensor;
      Extent ext = extentOf(t);
      if (ext.empty) continue;
      if (ext.overflow) {
        hard(ACLNN_ERR_PARAM_INVALID, cat(op, ": argument '", label(), "' has an extent that overflows"));
        continue;
      }
      std::optional<AllocInfo> a = memory.find(t.data);
      if (!a) {
        mismatch("argument '", label(), "' (", t.data, ") is not device memory (a host address?); ", runsOn());
        continue;
      }
      uintptr_t first = reinterpret_cast<uintptr_t>(t.data) + ext.begin;
      if (!a->contains(first, ext.end - ext.begin)) {
        hard(ACLNN_ERR_PARAM_INVALID,
             cat(op, ": argument '", label(), "' spans bytes [", ext.begin, ", ", ext.end, ") from ", t.data,
                 ", outside its allocation of ", a->size, " bytes at ", reinterpret_cast<void*>(a->base)));
        continue;
      }
      if (a->device != current) mismatch("argument '", label(), "' lives on device ", a->device, " but ", runsOn());
      v.touch(*a, p.role == Role::kOutput);
      if (p.role == Role::kOutput) v.outputs.emplace_back(&t, *a);
    }
  }
}

std::atomic<uint64_t> gLayoutGeneration{0};

}  // namespace

uint64_t layoutGeneration() { return gLayoutGeneration.load(std::memory_order_acquire); }
void layoutChanged() { gLayoutGeneration.fetch_add(1, std::memory_order_acq_rel); }

// What a clean check of a repeatable executor's launch found (the memory
// the kernel touches) and everything that outcome depended on besides the
// executor itself: its bound tensors' addresses (the only thing about them
// that can change), the workspace, the stream, the current device and the
// layout generation. CANN's executor is built for exactly this reuse: the
// same launch over and over with rebound addresses.
struct LaunchCheck {
  uint64_t generation = 0;
  aclrtStream stream = nullptr;
  int device = -1;
  void* workspace = nullptr;
  uint64_t workspaceSize = 0;
  std::vector<void*> addresses;  // each bound tensor's: the executor's inputs, then its outputs
  std::vector<Access> accesses;
};

namespace {

// Whether the executor's last clean check still holds for this launch. The
// generation comes first: while it is unchanged no bound aclTensor was
// destroyed, so reading their addresses is safe.
const LaunchCheck* stillChecked(const aclOpExecutor& e, void* workspace, uint64_t workspaceSize,
                                aclrtStream stream) {
  const LaunchCheck* c = e.lastCheck.get();
  if (c == nullptr || c->generation != layoutGeneration() || c->stream != stream || c->workspace != workspace ||
      c->workspaceSize != workspaceSize || c->device != currentDevice())
    return nullptr;
  const void* const* address = c->addresses.data();  // sized inputs + outputs by rememberCheck
  for (const std::vector<aclTensor*>* tensors : {&e.inputs, &e.outputs})
    for (const aclTensor* t : *tensors)
      if (*address++ != t->data) return nullptr;
  return c;
}

void rememberCheck(aclOpExecutor& e, uint64_t generation, void* workspace, uint64_t workspaceSize,
                   aclrtStream stream, const std::vector<Access>& accesses) {
  if (e.lastCheck == nullptr) e.lastCheck = std::make_shared<LaunchCheck>();
  LaunchCheck& c = *e.lastCheck;
  c.generation = generation;
  c.stream = stream;
  c.device = currentDevice();
  c.workspace = workspace;
  c.workspaceSize = workspaceSize;
  c.addresses.clear();
  for (const std::vector<aclTensor*>* tensors : {&e.inputs, &e.outputs})
    for (const aclTensor* t : *tensors) c.addresses.push_back(t->data);
  c.accesses.assign(accesses.begin(), accesses.end());
}

aclnnStatus setTensorAddr(const char* fn, aclOpExecutor* executor, size_t index, aclTensor* tensor, void* addr,
                          bool input) {
  // nnopbase checks the tensor first, then the executor (561103 for either).
  if (tensor == nullptr) return fail(ACLNN_ERR_INNER_NULLPTR, fn, ": tensor is nullptr");
  if (executor == nullptr) return fail(ACLNN_ERR_INNER_NULLPTR, fn, ": executor is nullptr");
  Executors& ex = executors();
  std::lock_guard lock(ex.mutex);
  if (!ex.live.contains(executor))
    return fail(ACLNN_ERR_PARAM_INVALID, fn, ": executor ", executor, " is not a live executor");
  std::vector<aclTensor*>& tensors = input ? executor->inputs : executor->outputs;
  const char* kind = input ? "input" : "output";
  if (index >= tensors.size())
    return fail(ACLNN_ERR_PARAM_INVALID, fn, ": index ", index, " is out of range; the ", executor->op,
                " executor has ", tensors.size(), " ", kind, tensors.size() == 1 ? "" : "s");
  // nnopbase updates the object it is given: any other aclTensor than the
  // one bound at phase 1 would change, and the executor would keep reading
  // the old address.
  if (tensors[index] != tensor)
    return fail(ACLNN_ERR_PARAM_INVALID, fn, ": aclTensor ", static_cast<const void*>(tensor), " is not the ",
                kind, " ", index, " the ", executor->op, " executor was built with (",
                static_cast<const void*>(tensors[index]), "); rebinding it would leave the executor's address unchanged");
  tensor->data = addr;
  return ACLNN_SUCCESS;
}

}  // namespace

// What a queued kernel runs on: a copy of the executor and of its aclTensor
// objects as they were at launch, with the memory the kernel may touch.
// A repeatable executor keeps its snapshots for its later launches, so that
// a launch on a cache hit allocates nothing: streams run in order, so the
// oldest is the first the queue lets go of.
struct Snapshot final : Work {
  std::vector<aclTensor> tensors;  // reserved up front: the params point into it
  aclOpExecutor executor;
  bool faulty = false;

  Snapshot(const aclOpExecutor& e, bool fault) : faulty(fault) {
    executor.op = e.op;
    executor.params = e.params;
    executor.workspaceSize = e.workspaceSize;
    executor.kernel = e.kernel;
    size_t count = 0;
    for (const Param& p : e.params)
      for (const BoundTensor& t : p.tensors) count += t.tensor != nullptr;
    tensors.reserve(count);
    for (Param& p : executor.params) {
      for (BoundTensor& t : p.tensors) {
        if (t.tensor == nullptr) continue;
        tensors.push_back(*t.tensor);
        t.tensor = &tensors.back();
      }
    }
  }

  // Requires sole ownership. Takes the executor's current addresses and `now`.
  void refresh(const aclOpExecutor& e, const std::vector<Access>& now) {
    size_t k = 0;
    for (const Param& p : e.params)
      for (const BoundTensor& t : p.tensors)
        if (t.tensor != nullptr) tensors[k++].data = t.tensor->data;
    accesses.assign(now.begin(), now.end());
  }

  std::string run() const override {
    const char* op = executor.op.c_str();
    if (faulty) return cat(op, ": injected fault at phase 3 (the kernel's run on the stream)");
    try {
      (*executor.kernel)(executor);
    } catch (const std::exception& e) {
      if (!lenientKernels()) return cat(op, ": kernel failed: ", e.what());
      // CANN's kernels check nothing on the device: what ATen's CPU kernel
      // refused comes out as a wrong result (fsimSetLenient).
      for (const Param& p : executor.params) {
        if (p.role != Role::kOutput) continue;
        for (const BoundTensor& t : p.tensors)
          if (t.tensor != nullptr) poison(*t.tensor);
      }
      counters().lenientKernelErrors++;
    }
    return std::string();
  }
};

namespace {

// How many snapshots a repeatable executor keeps: as many of its launches
// as one stream can hold, so that a loop never allocates once warm.
constexpr size_t kKeptSnapshots = kQueueDepth;

// The snapshot a launch queues (see Snapshot).
std::shared_ptr<const Work> snapshotFor(aclOpExecutor& e, const std::vector<Access>& accesses, bool fault) {
  std::vector<std::shared_ptr<Snapshot>>& kept = e.snapshots;
  size_t& oldest = e.nextSnapshot;
  if (!fault && !kept.empty()) {
    std::shared_ptr<Snapshot>& s = kept[oldest];
    if (s.use_count() == 1) {
      // The worker dropped it (a release decrement): see its last reads first.
      std::atomic_thread_fence(std::memory_order_acquire);
      s->refresh(e, accesses);
      oldest = (oldest + 1) % kept.size();
      return s;
    }
  }
  auto made = std::make_shared<Snapshot>(e, fault);
  made->accesses.assign(accesses.begin(), accesses.end());
  if (!fault && e.repeatable && kept.size() < kKeptSnapshots) {
    // The newest, just before the oldest.
    kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(oldest), made);
    oldest = (oldest + 1) % kept.size();
  }
  return made;
}

}  // namespace

aclOpExecutor* newExecutor(std::string op, std::vector<Param> params, uint64_t workspaceSize, Kernel kernel,
                           bool canRepeat) {
  auto e = std::make_unique<aclOpExecutor>();
  e->canRepeat = canRepeat;
  e->op = std::move(op);
  e->params = std::move(params);
  e->workspaceSize = workspaceSize;
  e->kernel = std::move(kernel);
  e->launches = &counters().opLaunches(e->op);
  for (Param& p : e->params)
    for (BoundTensor& t : p.tensors)
      if (t.tensor != nullptr) (p.role == Role::kInput ? e->inputs : e->outputs).push_back(t.tensor);
  Executors& ex = executors();
  std::lock_guard lock(ex.mutex);
  ex.live.insert(e.get());
  counters().liveExecutors++;
  return e.release();
}

aclnnStatus launch(const char* op, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                   aclrtStream stream) {
  Counters& c = counters();
  if (executor == nullptr) {
    c.rejectedLaunches++;
    return fail(ACLNN_ERR_PARAM_NULLPTR, op, ": executor is nullptr");
  }
  std::unique_ptr<aclOpExecutor> owned;  // a non-repeatable executor dies with this launch
  {
    Executors& ex = executors();
    std::lock_guard lock(ex.mutex);
    if (!ex.live.contains(executor)) {
      c.rejectedLaunches++;
      return fail(ACLNN_ERR_PARAM_INVALID, op, ": executor ", executor,
                  " is not live (destroyed, or already launched without aclSetAclOpExecutorRepeatable)");
    }
    // CANN's executor frees itself on this error, repeatable or not.
    const bool noWorkspace = workspaceSize > 0 && workspace == nullptr;
    if (!executor->repeatable || noWorkspace) {
      ex.live.erase(executor);
      owned.reset(executor);
      c.liveExecutors--;
    }
  }
  if (workspaceSize > 0 && workspace == nullptr) {
    c.rejectedLaunches++;
    return fail(ACLNN_ERR_PARAM_NULLPTR, op, ": workspace is nullptr but workspaceSize is ", workspaceSize,
                " (CANN destroys the executor, even a repeatable one)");
  }
  if (executor->op != op) {
    c.rejectedLaunches++;
    return fail(ACLNN_ERR_PARAM_INVALID, op, ": the executor was built by ", executor->op, "GetWorkspaceSize");
  }
  if (aclnnStatus s = checkFault(op, 2)) return s;
  std::optional<fsimMismatchMode> mode = mismatchMode(op);
  if (!mode || !streamMode(op)) {
    c.rejectedLaunches++;
    return ACLNN_ERR_RUNTIME_ERROR;
  }

  // A repeatable executor relaunched with nothing its last clean check
  // depended on changed skips the check: the locks and lookups of every
  // argument (stillChecked). Anything else is checked in full.
  const std::vector<Access>* accesses = nullptr;
  if (const LaunchCheck* checked =
          executor->repeatable ? stillChecked(*executor, workspace, workspaceSize, stream) : nullptr) {
    accesses = &checked->accesses;
  } else {
    const uint64_t generation = layoutGeneration();  // before the check: a change during it invalidates it
    thread_local Verdict v;  // reused: a launch on a cache hit allocates nothing here
    v.reset();
    validate(v, op, *executor, workspace, workspaceSize, stream);
    const bool clean = v.hardStatus == ACLNN_SUCCESS && v.mismatch.empty();
    if (executor->repeatable && clean) {
      rememberCheck(*executor, generation, workspace, workspaceSize, stream, v.accesses);
    } else if (executor->repeatable) {
      executor->lastCheck.reset();
    }
    if (v.hardStatus != ACLNN_SUCCESS) {
      c.rejectedLaunches++;
      return fail(v.hardStatus, v.hardError);
    }
    if (!v.mismatch.empty()) {
      c.mismatchedLaunches++;
      setError(v.mismatch);  // also in nan mode, where the launch "succeeds": it explains the NaNs
      if (*mode == FSIM_MISMATCH_ERROR) {
        c.rejectedLaunches++;
        return ACLNN_ERR_RUNTIME_ERROR;
      }
      // The NaNs are written at once, whatever stream the launch named (it may
      // be another device's): nan-mode tests see them after any synchronization.
      AccessGrant grant;
      for (const auto& [tensor, alloc] : v.outputs) {
        grant.add(alloc);
        poison(*tensor);
      }
      return ACLNN_SUCCESS;
    }
    accesses = &v.accesses;
  }

  // The worker grants the accesses around the run.
  Task task{op, snapshotFor(*executor, *accesses, takeFault(op, 3))};  // op: a string literal (FSIM_PHASE2)
  enqueue(stream, std::move(task));
  c.launches[currentDevice()]++;
  executor->launches->fetch_add(1, std::memory_order_relaxed);
  return ACLNN_SUCCESS;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  if (executor == nullptr) return fail(ACLNN_ERR_INNER_NULLPTR, "aclSetAclOpExecutorRepeatable: executor is nullptr");
  Executors& ex = executors();
  std::lock_guard lock(ex.mutex);
  if (!ex.live.contains(executor))
    return fail(ACLNN_ERR_PARAM_INVALID, "aclSetAclOpExecutorRepeatable: executor ", executor,
                " is not a live executor");
  // CANN refuses (561000, a warning only) for executors that cannot be
  // replayed, such as an operator's whose output shape depends on the data.
  if (!executor->canRepeat) return ACLNN_ERR_INNER;
  executor->repeatable = true;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  if (executor == nullptr) return fail(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor: executor is nullptr");
  Executors& ex = executors();
  {
    std::lock_guard lock(ex.mutex);
    if (ex.live.erase(executor) == 0)
      return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyAclOpExecutor: executor ", executor,
                  " is not a live executor");
  }
  counters().liveExecutors--;
  delete executor;
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor, void* addr) {
  return setTensorAddr("aclSetInputTensorAddr", executor, index, tensor, addr, true);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor, void* addr) {
  return setTensorAddr("aclSetOutputTensorAddr", executor, index, tensor, addr, false);
}

}  // extern "C"
