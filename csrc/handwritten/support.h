// Helpers shared by the handwritten kernels.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnReduceSum.h"

namespace flagos::hw {

// The number of true elements of a bool tensor that lives on `device`:
// counted there (aclnnReduceSum), then read back. For ops whose output size
// depends on the data.
inline int64_t count_true(const at::Tensor& mask, const LaunchDevice& device) {
  if (mask.numel() == 0) {
    return 0;
  }
  std::vector<int64_t> dims(mask.dim());
  std::iota(dims.begin(), dims.end(), int64_t{0});
  const at::Tensor count = empty_on(device, {}, at::kLong);
  FLAGOS_GUARDED_LAUNCH(device, aclnnReduceSum, mask, dims, false, at::kLong, count);
  return count.item<int64_t>();
}

// PyTorch's error for an out= tensor of the wrong dtype (with its dtype
// names: "float", "long int").
inline void check_out_dtype(const at::Tensor& out, at::ScalarType expected) {
  TORCH_CHECK(out.scalar_type() == expected, "Expected out tensor to have dtype ",
              c10::scalarTypeToTypeMeta(expected), ", but got ", out.dtype(), " instead");
}

// ---- tensor lists by (device, dtype) ----------------------------------------

// One list launch: the indices whose tensors live on `device` with `dtype`.
struct Group {
  c10::DeviceIndex device;
  at::ScalarType dtype;
  std::vector<size_t> members;
};

struct Plan {
  std::vector<Group> groups;    // in the order of their first index
  std::vector<size_t> singles;  // the indices `joins` refused
};

// The indices of `self` that `joins(i)`, grouped by device and dtype, and
// the others: a list that spans devices launches once per device, each
// launch on its own device.
template <typename Joins>
Plan plan_launches(at::TensorList self, Joins joins) {
  Plan plan;
  for (size_t i = 0; i < self.size(); ++i) {
    if (!joins(i)) {
      plan.singles.push_back(i);
      continue;
    }
    const c10::DeviceIndex device = self[i].device().index();
    const at::ScalarType dtype = self[i].scalar_type();
    auto group = std::find_if(plan.groups.begin(), plan.groups.end(),
                              [&](const Group& g) { return g.device == device && g.dtype == dtype; });
    if (group == plan.groups.end()) {
      plan.groups.push_back({device, dtype, {i}});
    } else {
      group->members.push_back(i);
    }
  }
  return plan;
}

// The tensors of `list` at the indices of `group`, in order.
inline std::vector<at::Tensor> pick(at::TensorList list, const Group& group) {
  std::vector<at::Tensor> picked;
  picked.reserve(group.members.size());
  for (size_t i : group.members) {
    picked.push_back(list[i]);
  }
  return picked;
}

}  // namespace flagos::hw
