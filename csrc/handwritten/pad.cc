// Padding, as F.pad reaches it: reflection_pad{1,2,3}d /
// replication_pad{1,2,3}d with their backwards (aclnnReflectionPad*d,
// aclnnReplicationPad*d and their Backward operators). constant_pad_nd is a
// registry entry (yaml/ops/padding.yaml).
//
// CANN's reflection and replication operators take padding values from 0 to
// the padded dim's size - 1; ATen also takes
// - negative values, which cut: the kernel pads a narrowed view instead;
// - replication padding as large as wanted: replicating twice replicates
//   the same edge, so a large padding is applied in steps that each fit,
//   and a dim of size 1 (a video's single frame, padded causally) is
//   replicated by expanding it (its gradient: the sum over the expansion);
// - (CANN's 2-d backward operators take at most 7 for bfloat16): such a
//   gradient is computed in float and rounded once.
// A reflection padding that does not fit the narrowed dim cannot be
// computed on CANN and raises.
//
// reflection_pad1d/3d, replication_pad1d/2d/3d and the backwards of
// reflection_pad1d/3d and replication_pad1d are structured in ATen: this
// file defines their bodies (ATen's meta functions check the arguments and
// size the output), the generator writes and registers their wrappers. The
// others (reflection_pad2d and its backward, the backwards of
// replication_pad2d/3d) take their own arguments.
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnReflectionPad1d.h"
#include "flagos/aclnn/aclnnReflectionPad1dBackward.h"
#include "flagos/aclnn/aclnnReflectionPad2d.h"
#include "flagos/aclnn/aclnnReflectionPad2dBackward.h"
#include "flagos/aclnn/aclnnReflectionPad3d.h"
#include "flagos/aclnn/aclnnReflectionPad3dBackward.h"
#include "flagos/aclnn/aclnnReplicationPad1d.h"
#include "flagos/aclnn/aclnnReplicationPad1dBackward.h"
#include "flagos/aclnn/aclnnReplicationPad2d.h"
#include "flagos/aclnn/aclnnReplicationPad2dBackward.h"
#include "flagos/aclnn/aclnnReplicationPad3d.h"
#include "flagos/aclnn/aclnnReplicationPad3dBackward.h"

namespace flagos {
namespace {

// `sizes` padded by `pad`: (before, after) pairs from the last dim backwards.
std::vector<int64_t> padded_sizes(at::IntArrayRef sizes, at::IntArrayRef pad) {
  std::vector<int64_t> out = sizes.vec();
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    out[out.size() - 1 - i] += pad[2 * i] + pad[2 * i + 1];
  }
  return out;
}

// ---- reflection and replication ------------------------------------------------------

enum class Mode { kReflect, kReplicate };

// How a k-d reflection or replication padding runs on CANN: a narrowed view
// of the input (the negative padding), dims of size 1 expanded (replication),
// then launches.
struct PadPlan {
  std::vector<int64_t> cut_before, cut_after;  // per padded dim, the last dim first
  std::vector<int64_t> expand;                 // per padded dim: the size a dim of 1 expands to, or 0
  std::vector<std::vector<int64_t>> steps;     // each a CANN padding list
  bool cuts() const {
    return std::any_of(cut_before.begin(), cut_before.end(), [](int64_t v) { return v > 0; }) ||
           std::any_of(cut_after.begin(), cut_after.end(), [](int64_t v) { return v > 0; });
  }
  bool expands() const { return std::any_of(expand.begin(), expand.end(), [](int64_t v) { return v > 0; }); }
};

const char* mode_name(Mode mode) { return mode == Mode::kReflect ? "reflection" : "replication"; }

// ATen's checks of the input and padding of a k-d pad.
void check_pad(const char* op, Mode mode, size_t k, const at::Tensor& self, at::IntArrayRef padding) {
  TORCH_CHECK(padding.size() == 2 * k, op, ": padding size is expected to be ", 2 * k, ", but got: ", padding.size());
  const int64_t rank = self.dim();
  bool fits = rank == static_cast<int64_t>(k) + 1 || rank == static_cast<int64_t>(k) + 2;
  for (int64_t d = rank == static_cast<int64_t>(k) + 2 ? 1 : 0; fits && d < rank; ++d) {
    fits = self.size(d) != 0;
  }
  TORCH_CHECK(fits, "Expected ", k + 1, "D or ", k + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
              self.sizes());
  for (size_t i = 0; i < k; ++i) {
    const int64_t dim = rank - 1 - static_cast<int64_t>(i);
    const int64_t size = self.size(dim), before = padding[2 * i], after = padding[2 * i + 1];
    if (mode == Mode::kReflect) {
      TORCH_CHECK(before < size && after < size,
                  "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                  "padding (",
                  before, ", ", after, ") at dimension ", dim, " of input ", self.sizes());
    }
    TORCH_CHECK(size + before + after >= 1, op, ": input size ", size, " of dimension ", dim,
                " is too small for padding (", before, ", ", after, "): the output size would be ",
                size + before + after);
  }
}

// The cuts of the negative padding, then steps of positive padding that
// each fit CANN (every value smaller than the dim it pads, as it is then).
PadPlan plan_pad(const char* op, Mode mode, size_t k, at::IntArrayRef sizes_in, at::IntArrayRef padding) {
  PadPlan plan;
  std::vector<int64_t> sizes = sizes_in.vec();
  std::vector<int64_t> left(2 * k);
  for (size_t i = 0; i < k; ++i) {
    const size_t dim = sizes.size() - 1 - i;
    plan.cut_before.push_back(std::max<int64_t>(-padding[2 * i], 0));
    plan.cut_after.push_back(std::max<int64_t>(-padding[2 * i + 1], 0));
    sizes[dim] -= plan.cut_before[i] + plan.cut_after[i];
    left[2 * i] = std::max<int64_t>(padding[2 * i], 0);
    left[2 * i + 1] = std::max<int64_t>(padding[2 * i + 1], 0);
    TORCH_CHECK(sizes[dim] >= 1 || (left[2 * i] == 0 && left[2 * i + 1] == 0), "flagos: ", op,
                ": padding (", padding[2 * i], ", ", padding[2 * i + 1], ") cuts all of dimension ", dim,
                " and pads it again; CANN's ", mode_name(mode), " padding cannot compute that");
    const int64_t grow = left[2 * i] + left[2 * i + 1];
    plan.expand.push_back(mode == Mode::kReplicate && sizes[dim] == 1 && grow > 0 ? 1 + grow : 0);
    if (plan.expand[i] > 0) {  // CANN pads a dim by less than its size: 0 for a dim of 1
      sizes[dim] = plan.expand[i];
      left[2 * i] = left[2 * i + 1] = 0;
    }
  }
  while (std::any_of(left.begin(), left.end(), [](int64_t v) { return v > 0; })) {
    std::vector<int64_t> step(2 * k);
    for (size_t i = 0; i < k; ++i) {
      const size_t dim = sizes.size() - 1 - i;
      const int64_t limit = sizes[dim] - 1;  // CANN: each padding value smaller than the dim it pads
      if (mode == Mode::kReflect) {
        TORCH_CHECK(left[2 * i] <= limit && left[2 * i + 1] <= limit, "flagos: ", op, ": padding (",
                    padding[2 * i], ", ", padding[2 * i + 1], ") of dimension ", dim,
                    " reflects past the part its negative padding keeps; CANN's reflection padding cannot "
                    "compute that");
      }
      step[2 * i] = std::min(left[2 * i], limit);
      step[2 * i + 1] = std::min(left[2 * i + 1], limit);
      TORCH_INTERNAL_ASSERT(limit > 0 || (left[2 * i] == 0 && left[2 * i + 1] == 0), op,
                            ": no padding step fits dimension ", dim);
      left[2 * i] -= step[2 * i];
      left[2 * i + 1] -= step[2 * i + 1];
      sizes[dim] += step[2 * i] + step[2 * i + 1];
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

// The part of `t` that the negative padding keeps (a view).
at::Tensor cut(const at::Tensor& t, const PadPlan& plan) {
  at::Tensor view = t;
  for (size_t i = 0; i < plan.cut_before.size(); ++i) {
    const int64_t dim = t.dim() - 1 - static_cast<int64_t>(i);
    if (plan.cut_before[i] > 0 || plan.cut_after[i] > 0) {
      view = view.narrow(dim, plan.cut_before[i], view.size(dim) - plan.cut_before[i] - plan.cut_after[i]);
    }
  }
  return view;
}

// `t` (the kept part) with its replicated dims of size 1 expanded (a view).
at::Tensor expand(const at::Tensor& t, const PadPlan& plan) {
  if (!plan.expands()) {
    return t;
  }
  std::vector<int64_t> sizes = t.sizes().vec();
  for (size_t i = 0; i < plan.expand.size(); ++i) {
    if (plan.expand[i] > 0) {
      sizes[sizes.size() - 1 - i] = plan.expand[i];
    }
  }
  return t.expand(sizes);
}

// The dims a gradient sums over to undo expand().
std::vector<int64_t> expanded_dims(int64_t rank, const PadPlan& plan) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < plan.expand.size(); ++i) {
    if (plan.expand[i] > 0) {
      dims.push_back(rank - 1 - static_cast<int64_t>(i));
    }
  }
  return dims;
}

void launch_pad(const LaunchDevice& device, Mode mode, size_t k, const at::Tensor& self,
                const std::vector<int64_t>& padding, const at::Tensor& out) {
  if (mode == Mode::kReflect) {
    if (k == 1) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReflectionPad1d, self, padding, out);
    } else if (k == 2) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReflectionPad2d, self, padding, out);
    } else {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReflectionPad3d, self, padding, out);
    }
  } else {
    if (k == 1) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReplicationPad1d, self, padding, out);
    } else if (k == 2) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReplicationPad2d, self, padding, out);
    } else {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReplicationPad3d, self, padding, out);
    }
  }
}

void launch_pad_backward(const LaunchDevice& device, Mode mode, size_t k, const at::Tensor& grad_output,
                         const at::Tensor& self, const std::vector<int64_t>& padding, const at::Tensor& grad_input) {
  if (mode == Mode::kReflect) {
    if (k == 1) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReflectionPad1dBackward, grad_output, self, padding, grad_input);
    } else if (k == 2) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReflectionPad2dBackward, grad_output, self, padding, grad_input);
    } else {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReflectionPad3dBackward, grad_output, self, padding, grad_input);
    }
  } else {
    if (k == 1) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReplicationPad1dBackward, grad_output, self, padding, grad_input);
    } else if (k == 2) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReplicationPad2dBackward, grad_output, self, padding, grad_input);
    } else {
      FLAGOS_GUARDED_LAUNCH(device, aclnnReplicationPad3dBackward, grad_output, self, padding, grad_input);
    }
  }
}

// `self` padded into `out`, which has the padded sizes (ATen's meta function
// or the kernel below sized it, after the checks of check_pad).
void pad_into(const char* op, const LaunchDevice& device, Mode mode, size_t k, const at::Tensor& self,
              at::IntArrayRef padding, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  const PadPlan plan = plan_pad(op, mode, k, self.sizes(), padding);
  at::Tensor x = expand(cut(self, plan), plan);
  if (plan.steps.empty()) {  // nothing left to pad: the view is the result
    out.copy_(x);
    return;
  }
  for (size_t j = 0; j < plan.steps.size(); ++j) {
    // Each step pads the previous one's result; the last one writes `out`.
    const at::Tensor next = j + 1 == plan.steps.size()
                                ? out
                                : empty_on(device, padded_sizes(x.sizes(), plan.steps[j]), self.scalar_type());
    launch_pad(device, mode, k, x, plan.steps[j], next);
    x = next;
  }
}

// The gradient of pad_into: grad_output (of the padded sizes, checked by the
// caller) into grad_input (of self's sizes).
void pad_backward_into(const char* op, const LaunchDevice& device, Mode mode, size_t k,
                       const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef padding,
                       const at::Tensor& grad_input) {
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output is ", grad_output.scalar_type(),
              ", self is ", self.scalar_type());
  if (grad_input.numel() == 0) {
    return;
  }
  const PadPlan plan = plan_pad(op, mode, k, self.sizes(), padding);
  if (plan.steps.empty() && !plan.expands() && !plan.cuts()) {  // a padding of zeros: the gradient passes through
    grad_input.copy_(grad_output);
    return;
  }
  bool over_seven = false;
  for (const std::vector<int64_t>& step : plan.steps) {
    over_seven = over_seven || *std::max_element(step.begin(), step.end()) > 7;
  }
  // CANN's 2-d backward operators take bfloat16 padding values up to 7.
  const bool widen = k == 2 && self.scalar_type() == at::kBFloat16 && over_seven;
  const at::ScalarType compute = widen ? at::kFloat : self.scalar_type();
  // The last launch writes grad_input itself when nothing is left to do after it.
  const bool direct = !widen && !plan.expands() && !plan.cuts();
  // The sizes before each step: the kept (and expanded) part's, then each step's result.
  const at::Tensor kept = expand(cut(self, plan), plan);
  std::vector<std::vector<int64_t>> before{kept.sizes().vec()};
  for (size_t j = 0; j + 1 < plan.steps.size(); ++j) {
    before.push_back(padded_sizes(before.back(), plan.steps[j]));
  }
  at::Tensor grad = widen ? grad_output.to(at::kFloat) : grad_output;
  for (size_t j = plan.steps.size(); j-- > 0;) {
    // `self` tells the operator the unpadded shape: the input itself for the
    // first step, a tensor of that shape (its values unread) otherwise.
    const bool input_fits = j == 0 && !widen && !plan.expands();
    const at::Tensor shape = input_fits ? kept : empty_on(device, before[j], compute);
    const at::Tensor step_grad = j == 0 && direct ? grad_input : empty_on(device, before[j], compute);
    launch_pad_backward(device, mode, k, grad, shape, plan.steps[j], step_grad);
    grad = step_grad;
  }
  if (direct) {
    return;
  }
  if (plan.expands()) {
    grad = grad.sum(expanded_dims(grad.dim(), plan), /*keepdim=*/true);
  }
  if (widen) {
    grad = grad.to(self.scalar_type());
  }
  if (plan.cuts()) {
    // The kept part's gradient; 0 for what the negative padding cut.
    grad_input.zero_();
    cut(grad_input, plan).copy_(grad);
  } else {
    grad_input.copy_(grad);
  }
}

at::Tensor pad_backward(const char* op, const LaunchDevice& device, Mode mode, size_t k,
                        const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef padding) {
  check_pad(op, mode, k, self, padding);
  const std::vector<int64_t> sizes = padded_sizes(self.sizes(), padding);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(sizes), op, ": expected grad_output of sizes ",
              at::IntArrayRef(sizes), ", got ", grad_output.sizes());
  at::Tensor grad_input = empty_on(device, self.sizes(), self.scalar_type());
  pad_backward_into(op, device, mode, k, grad_output, self, padding, grad_input);
  return grad_input;
}

}  // namespace
}  // namespace flagos

// ---- the ops that are not structured in ATen ---------------------------------------

namespace flagos::impl {

at::Tensor reflection_pad2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef padding) {
  check_pad("reflection_pad2d", Mode::kReflect, 2, self, padding);
  at::Tensor out = empty_on(device, padded_sizes(self.sizes(), padding), self.scalar_type());
  pad_into("reflection_pad2d", device, Mode::kReflect, 2, self, padding, out);
  return out;
}

at::Tensor reflection_pad2d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                     const at::Tensor& self, at::IntArrayRef padding) {
  return pad_backward("reflection_pad2d_backward", device, Mode::kReflect, 2, grad_output, self, padding);
}
at::Tensor replication_pad2d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                      const at::Tensor& self, at::IntArrayRef padding) {
  return pad_backward("replication_pad2d_backward", device, Mode::kReplicate, 2, grad_output, self, padding);
}
at::Tensor replication_pad3d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                      const at::Tensor& self, at::IntArrayRef padding) {
  return pad_backward("replication_pad3d_backward", device, Mode::kReplicate, 3, grad_output, self, padding);
}

// ---- the structured ops --------------------------------------------------------------
// ATen's meta functions (reflection_pad1d/3d, replication_pad1d/2d/3d and the
// backwards of reflection_pad1d/3d and replication_pad1d) have checked the
// input's rank and sizes, the padding (its length; a reflection padding
// smaller than its dim; a positive output size) and grad_output's sizes, and
// sized the output.

void reflection_pad1d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef padding,
                      const at::Tensor& out) {
  pad_into("reflection_pad1d", device, Mode::kReflect, 1, self, padding, out);
}

void reflection_pad3d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef padding,
                      const at::Tensor& out) {
  pad_into("reflection_pad3d", device, Mode::kReflect, 3, self, padding, out);
}

void replication_pad1d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef padding,
                       const at::Tensor& out) {
  pad_into("replication_pad1d", device, Mode::kReplicate, 1, self, padding, out);
}

void replication_pad2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef padding,
                       const at::Tensor& out) {
  pad_into("replication_pad2d", device, Mode::kReplicate, 2, self, padding, out);
}

void replication_pad3d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef padding,
                       const at::Tensor& out) {
  pad_into("replication_pad3d", device, Mode::kReplicate, 3, self, padding, out);
}

void reflection_pad1d_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                               at::IntArrayRef padding, const at::Tensor& grad_input) {
  pad_backward_into("reflection_pad1d_backward", device, Mode::kReflect, 1, grad_output, self, padding, grad_input);
}

void reflection_pad3d_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                               at::IntArrayRef padding, const at::Tensor& grad_input) {
  pad_backward_into("reflection_pad3d_backward", device, Mode::kReflect, 3, grad_output, self, padding, grad_input);
}

void replication_pad1d_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                                at::IntArrayRef padding, const at::Tensor& grad_input) {
  pad_backward_into("replication_pad1d_backward", device, Mode::kReplicate, 1, grad_output, self, padding,
                    grad_input);
}

}  // namespace flagos::impl
