// Shared only by the two simulator libraries (libflagos_sim_runtime and
// libflagos_sim_opapi): the layout of the opaque ACLNN argument types, the
// executor, and the runtime entry points the operator library builds on.
// The backend never includes this header; it sees only acl_api.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "flagos/acl_api.h"

// ---- argument objects (libnnopbase's opaque types) -----------------------

struct aclTensor {
  std::vector<int64_t> viewDims;
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements, from the storage start
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_ND;
  std::vector<int64_t> storageDims;
  void* data = nullptr;  // device address of the storage start
  uint64_t serial = 0;   // unique per aclCreateTensor: tells a live object from a reused address
};

struct aclScalar {
  aclDataType dtype = ACL_DT_UNDEFINED;
  alignas(8) unsigned char bytes[16] = {};  // the value in dtype's representation
};

struct aclIntArray {
  std::vector<int64_t> values;
};
struct aclFloatArray {
  std::vector<float> values;
};
struct aclBoolArray {
  std::vector<bool> values;
};
// Lists own their elements: destroying a list destroys them (as in CANN).
struct aclTensorList {
  std::vector<aclTensor*> tensors;
};
struct aclScalarList {
  std::vector<aclScalar*> scalars;
};

namespace fsim {

// Whether an operator writes a tensor parameter (or the elements of a list
// parameter): `outputs:` of the operator's registry entry. CANN's constness
// does not say (aclnnRelu's `out` is a `const aclTensor*`).
enum class Role : uint8_t { kInput, kOutput };

// One aclTensor an executor was built with: the caller's object itself, as
// in nnopbase, whose executors read (and rebinding updates) the very
// aclTensor objects phase 1 was given. The caller must keep it alive until
// the executor is launched (or, if repeatable, destroyed); `serial` lets a
// launch detect that it was destroyed, even if its address was reused.
struct BoundTensor {
  aclTensor* tensor = nullptr;  // nullptr: an absent optional tensor
  uint64_t serial = 0;
};

// One tensor or tensor-list parameter of an operator, as phase 1 saw it.
struct Param {
  std::string name;
  Role role = Role::kInput;
  bool isList = false;
  std::vector<BoundTensor> tensors;
};

// Shared, not copied: each launch's snapshot of the executor holds the kernel.
using Kernel = std::shared_ptr<const std::function<void(const aclOpExecutor&)>>;

// What a queued launch runs on (the runtime's executor.cc).
struct Snapshot;
// The last clean check of a repeatable executor's launch (executor.cc).
struct LaunchCheck;

}  // namespace fsim

struct aclOpExecutor {
  std::string op;  // e.g. "aclnnAdd"
  std::vector<fsim::Param> params;
  uint64_t workspaceSize = 0;
  fsim::Kernel kernel;
  bool repeatable = false;
  bool canRepeat = true;  // false: aclSetAclOpExecutorRepeatable fails (Op::unrepeatable)
  // Present tensors in argument order (list elements one by one); what
  // aclSetInputTensorAddr / aclSetOutputTensorAddr index.
  std::vector<aclTensor*> inputs;
  std::vector<aclTensor*> outputs;
  // The snapshots of its launches, in launch order from `nextSnapshot` (the
  // oldest): a launch reuses the oldest, refreshed in place, once no queued
  // work holds it. Only a repeatable executor has a next launch.
  std::vector<std::shared_ptr<fsim::Snapshot>> snapshots;
  size_t nextSnapshot = 0;
  std::shared_ptr<fsim::LaunchCheck> lastCheck;  // what its last clean launch check found
  std::atomic<uint64_t>* launches = nullptr;  // the operator's launch counter (statistics)
};

namespace fsim {

// Concatenates anything streamable, for error messages.
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}

// Sets the calling thread's aclGetRecentErrMsg().
void setError(std::string message);

// Bytes per element of an ACL dtype (0 if unknown), and its enum name.
size_t dtypeSize(aclDataType dtype);
const char* dtypeName(aclDataType dtype);

// Fault injection hook, called by every operator phase. Returns
// ACLNN_SUCCESS, or the failure status with the error message set.
aclnnStatus checkFault(const char* op, int phase);
// Uses up one injected fault of (op, phase) if there is one, without
// setting an error message: phase 3, whose failure happens on the stream.
bool takeFault(const char* op, int phase);

// Creates a live executor (what phase 1 returns).
aclOpExecutor* newExecutor(std::string op, std::vector<Param> params,
                           uint64_t workspaceSize, Kernel kernel, bool canRepeat = true);

// Phase 2 of every operator: validates that the tensors, the workspace, the
// stream and the calling thread's current device are one device, then runs
// the kernel (or applies the mismatch mode). Destroys a non-repeatable
// executor whatever the outcome.
aclnnStatus launch(const char* op, void* workspace, uint64_t workspaceSize,
                   aclOpExecutor* executor, aclrtStream stream);

}  // namespace fsim
