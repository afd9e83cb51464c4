// Foreach ops: _foreach_add_.Scalar, _foreach_add_.List, _foreach_mul_.Scalar,
// _foreach_mul_.List, _foreach_addcmul_.Scalar, _foreach_div_.ScalarList,
// _foreach_addcdiv_.ScalarList and the out-of-place _foreach_add.Scalar,
// _foreach_add.List, _foreach_mul.Scalar (aclnnForeachAddScalarV2,
// aclnnForeachAddListV2, aclnnForeachMulScalar(V2), aclnnForeachMulList,
// aclnnForeachAddcmulScalarV2, aclnnForeachDivScalar,
// aclnnForeachAddcdivScalarList).
//
// A tensor list may span devices: the tensors of one index i across the
// lists must share a device (PyTorch's same-device error names both
// otherwise). The indices are grouped by (device, dtype), keeping the
// pairing across the lists, and each group is one launch guarded on its own
// device (the lint's allow-launch-device exemption): the list is never
// forced onto its first tensor's device.
//
// The fused operators take contiguous float32, float16, bfloat16 or int32
// tensors, equal shapes across the lists and a scalar that does not promote
// the dtype. Any other index (another dtype, a broadcast, a promoting scalar,
// a CPU tensor, an empty tensor) runs the per-tensor op instead, as ATen's own
// slow path does; that op's kernel guards its own launch. The generated
// wrapper makes the first tensor's device current for the whole op
// (`composite: true`, a CompositeGuard), so that those per-tensor ops (and
// the fused launches on that device) make no set-device call of their own.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/addcdiv.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/result_type.h>

#include <algorithm>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnForeachAddListV2.h"
#include "flagos/aclnn/aclnnForeachAddScalarV2.h"
#include "flagos/aclnn/aclnnForeachAddcdivScalarList.h"
#include "flagos/aclnn/aclnnForeachAddcmulScalarV2.h"
#include "flagos/aclnn/aclnnForeachDivScalar.h"
#include "flagos/aclnn/aclnnForeachMulList.h"
#include "flagos/aclnn/aclnnForeachMulScalar.h"
#include "flagos/aclnn/aclnnForeachMulScalarV2.h"

namespace flagos {
namespace {

using hw::Group;
using hw::pick;
using hw::Plan;
using hw::plan_launches;

void check_lengths(at::ArrayRef<at::TensorList> lists) {
  TORCH_CHECK(!lists[0].empty(), "Tensor list must have at least one tensor.");
  for (const at::TensorList list : lists) {
    TORCH_CHECK(list.size() == lists[0].size(), "Tensor lists must have the same number of tensors, got ",
                lists[0].size(), " and ", list.size());
  }
}

bool fused_dtype(at::ScalarType dtype) {
  return dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16 || dtype == at::kInt;
}

// Whether index i of the lists can join a fused launch.
bool fusable(at::ArrayRef<at::TensorList> lists, size_t i) {
  const at::Tensor& first = lists[0][i];
  if (!fused_dtype(first.scalar_type()) || first.numel() == 0) {
    return false;
  }
  return std::all_of(lists.begin(), lists.end(), [&](const at::TensorList list) {
    const at::Tensor& t = list[i];
    return t.is_privateuseone() && t.scalar_type() == first.scalar_type() && t.sizes() == first.sizes() &&
           t.is_contiguous();
  });
}

// A scalar that leaves the dtype as it is (no int32 + 0.5).
bool keeps_dtype(const at::Tensor& t, const at::Scalar& scalar) {
  return at::result_type(t, scalar) == t.scalar_type();
}

// The out-of-place results of a group: new tensors on the group's device,
// stored in `results` at the group's indices and returned for the launch.
std::vector<at::Tensor> allocate(at::TensorList self, const Group& group, std::vector<at::Tensor>& results) {
  // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
  const LaunchDevice device = launch_device_of(self[group.members[0]]);
  const LaunchGuard device_current(device);  // before any allocation
  std::vector<at::Tensor> outs;
  for (size_t i : group.members) {
    results[i] = empty_on(device, self[i].sizes(), self[i].scalar_type());
    outs.push_back(results[i]);
  }
  return outs;
}

bool float_list_dtype(at::ScalarType dtype) {
  return dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16;
}

// `values` as a float32 tensor on `device`.
at::Tensor values_on(c10::DeviceIndex device, const std::vector<float>& values) {
  at::Tensor host = at::empty({static_cast<int64_t>(values.size())}, at::kFloat);
  std::copy(values.begin(), values.end(), host.mutable_data_ptr<float>());
  return host.to(flagos_device(device));
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

// ---- in place ------------------------------------------------------------

void foreach_add_scalar_(const LaunchDevice& device, at::TensorList self, const at::Scalar& scalar) {
  check_lengths({self});
  const Plan plan = plan_launches(self, [&](size_t i) { return fusable({self}, i) && keeps_dtype(self[i], scalar); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x = pick(self, group);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x, aclnnForeachAddScalarV2, x, scalar, x);
  }
  for (size_t i : plan.singles) {
    self[i].add_(scalar);
  }
}

void foreach_add_list_(const LaunchDevice& device, at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  check_lengths({self, other});
  for (size_t i = 0; i < self.size(); ++i) {
    check_same_device("_foreach_add_.List", {{"self", self[i]}, {"other", other[i]}});
  }
  const Plan plan =
      plan_launches(self, [&](size_t i) { return fusable({self, other}, i) && keeps_dtype(self[i], alpha); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x1 = pick(self, group);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x1, aclnnForeachAddListV2, x1, pick(other, group), alpha, x1);
  }
  for (size_t i : plan.singles) {
    self[i].add_(other[i], alpha);
  }
}

// float32 and bfloat16 lists take the factor as a float32 device tensor
// (aclnnForeachMulScalar), so AdamW's decay by 1 - lr * weight_decay keeps
// its executor when a scheduler changes lr. float16 and int32 lists keep the
// aclScalar (V2): CANN would want a float16 factor, which rounds where ATen
// does not.
void foreach_mul_scalar_(const LaunchDevice& device, at::TensorList self, const at::Scalar& scalar) {
  check_lengths({self});
  const Plan plan = plan_launches(self, [&](size_t i) { return fusable({self}, i) && keeps_dtype(self[i], scalar); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x = pick(self, group);
    if (group.dtype == at::kFloat || group.dtype == at::kBFloat16) {
      const at::Tensor factor = values_on(group.device, {scalar.to<float>()});
      // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
      FLAGOS_GUARDED_LAUNCH(x, aclnnForeachMulScalar, x, factor, x);
    } else {
      // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
      FLAGOS_GUARDED_LAUNCH(x, aclnnForeachMulScalarV2, x, scalar, x);
    }
  }
  for (size_t i : plan.singles) {
    self[i].mul_(scalar);
  }
}

void foreach_mul_list_(const LaunchDevice& device, at::TensorList self, at::TensorList other) {
  check_lengths({self, other});
  for (size_t i = 0; i < self.size(); ++i) {
    check_same_device("_foreach_mul_.List", {{"self", self[i]}, {"other", other[i]}});
  }
  const Plan plan = plan_launches(self, [&](size_t i) { return fusable({self, other}, i); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x1 = pick(self, group);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x1, aclnnForeachMulList, x1, pick(other, group), x1);
  }
  for (size_t i : plan.singles) {
    self[i].mul_(other[i]);
  }
}

void foreach_addcmul_scalar_(const LaunchDevice& device, at::TensorList self, at::TensorList tensor1,
                             at::TensorList tensor2, const at::Scalar& value) {
  check_lengths({self, tensor1, tensor2});
  for (size_t i = 0; i < self.size(); ++i) {
    check_same_device("_foreach_addcmul_.Scalar",
                      {{"self", self[i]}, {"tensor1", tensor1[i]}, {"tensor2", tensor2[i]}});
  }
  const Plan plan = plan_launches(
      self, [&](size_t i) { return fusable({self, tensor1, tensor2}, i) && keeps_dtype(self[i], value); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x1 = pick(self, group);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x1, aclnnForeachAddcmulScalarV2, x1, pick(tensor1, group), pick(tensor2, group), value,
                          x1);
  }
  for (size_t i : plan.singles) {
    self[i].addcmul_(tensor1[i], tensor2[i], value);
  }
}

// ---- scalar lists --------------------------------------------------------
//
// An optimizer's scalar lists change every step: AdamW divides by
// sqrt(1 - beta2^step) and adds with the step size -lr / (1 - beta1^step).
// An aclScalar is read into the tiling at phase 1 and CANN has no call that
// changes it in a repeatable executor (only tensor addresses can be rebound),
// so every step would miss the executor cache and pay phase 1 again. These
// operators take the values as a float32 device tensor instead: the values
// cost one small host-to-device copy, and the cached executor is rebound to
// the new tensor like any input.

void foreach_div_scalar_list_(const LaunchDevice& device, at::TensorList self, at::ArrayRef<at::Scalar> scalars) {
  check_lengths({self});
  TORCH_CHECK(scalars.size() == self.size(), "Tensor list must have same number of elements as scalar list, got ",
              self.size(), " and ", scalars.size());
  // aclnnForeachDivScalar divides a whole list by one value, a float32 one for
  // float32 and bfloat16 lists (a float16 list would need a float16 divisor,
  // which rounds where ATen does not). AdamW's list is one value repeated.
  const bool one_value = std::all_of(scalars.begin(), scalars.end(), [&](const at::Scalar& s) {
    return !s.isComplex() && s.toDouble() == scalars[0].toDouble();
  });
  const Plan plan = plan_launches(self, [&](size_t i) {
    const at::ScalarType dtype = self[i].scalar_type();
    return one_value && fusable({self}, i) && (dtype == at::kFloat || dtype == at::kBFloat16) &&
           keeps_dtype(self[i], scalars[i]);
  });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x = pick(self, group);
    const at::Tensor divisor = values_on(group.device, {scalars[group.members[0]].to<float>()});
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x, aclnnForeachDivScalar, x, divisor, x);
  }
  for (size_t i : plan.singles) {
    self[i].div_(scalars[i]);
  }
}

void foreach_addcdiv_scalar_list_(const LaunchDevice& device, at::TensorList self, at::TensorList tensor1,
                                  at::TensorList tensor2, at::ArrayRef<at::Scalar> scalars) {
  check_lengths({self, tensor1, tensor2});
  TORCH_CHECK(scalars.size() == self.size(), "Tensor list must have same number of elements as scalar list, got ",
              self.size(), " and ", scalars.size());
  for (size_t i = 0; i < self.size(); ++i) {
    check_same_device("_foreach_addcdiv_.ScalarList",
                      {{"self", self[i]}, {"tensor1", tensor1[i]}, {"tensor2", tensor2[i]}});
  }
  const Plan plan = plan_launches(self, [&](size_t i) {
    return fusable({self, tensor1, tensor2}, i) && float_list_dtype(self[i].scalar_type()) &&
           keeps_dtype(self[i], scalars[i]);
  });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x1 = pick(self, group);
    std::vector<float> values;
    for (size_t i : group.members) values.push_back(scalars[i].to<float>());
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x1, aclnnForeachAddcdivScalarList, x1, pick(tensor1, group), pick(tensor2, group),
                          values_on(group.device, values), x1);
  }
  for (size_t i : plan.singles) {
    self[i].addcdiv_(tensor1[i], tensor2[i], scalars[i]);
  }
}

// ---- out of place --------------------------------------------------------

std::vector<at::Tensor> foreach_add_scalar(const LaunchDevice& device, at::TensorList self, const at::Scalar& scalar) {
  check_lengths({self});
  std::vector<at::Tensor> results(self.size());
  const Plan plan = plan_launches(self, [&](size_t i) { return fusable({self}, i) && keeps_dtype(self[i], scalar); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x = pick(self, group);
    const std::vector<at::Tensor> out = allocate(self, group, results);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x, aclnnForeachAddScalarV2, x, scalar, out);
  }
  for (size_t i : plan.singles) {
    results[i] = at::add(self[i], scalar);
  }
  return results;
}

std::vector<at::Tensor> foreach_add_list(const LaunchDevice& device, at::TensorList self, at::TensorList other,
                                         const at::Scalar& alpha) {
  check_lengths({self, other});
  for (size_t i = 0; i < self.size(); ++i) {
    check_same_device("_foreach_add.List", {{"self", self[i]}, {"other", other[i]}});
  }
  std::vector<at::Tensor> results(self.size());
  const Plan plan =
      plan_launches(self, [&](size_t i) { return fusable({self, other}, i) && keeps_dtype(self[i], alpha); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x1 = pick(self, group);
    const std::vector<at::Tensor> out = allocate(self, group, results);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x1, aclnnForeachAddListV2, x1, pick(other, group), alpha, out);
  }
  for (size_t i : plan.singles) {
    results[i] = at::add(self[i], other[i], alpha);
  }
  return results;
}

std::vector<at::Tensor> foreach_mul_scalar(const LaunchDevice& device, at::TensorList self, const at::Scalar& scalar) {
  check_lengths({self});
  std::vector<at::Tensor> results(self.size());
  const Plan plan = plan_launches(self, [&](size_t i) { return fusable({self}, i) && keeps_dtype(self[i], scalar); });
  for (const Group& group : plan.groups) {
    const std::vector<at::Tensor> x = pick(self, group);
    const std::vector<at::Tensor> out = allocate(self, group, results);
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(x, aclnnForeachMulScalarV2, x, scalar, out);
  }
  for (size_t i : plan.singles) {
    results[i] = at::mul(self[i], scalar);
  }
  return results;
}

}  // namespace flagos::impl
