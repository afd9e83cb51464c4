// Padding (hicann/ops-math conversion/): aclnnConstantPadNd, aclnnReflectionPad1d/2d/3d,
// aclnnReplicationPad1d/2d/3d and their backward operators.
//
// A padding list holds (before, after) per dim, from the last dim backwards,
// as ATen's. What CANN's docs require and the simulator checks at phase 1:
// - reflection and replication: `padding` has 2 values per padded dim, each
//   smaller than the dim it pads (CANN's docs give no negative padding: the
//   simulator rejects it); self has k+1 or k+2 dims for a k-d pad; a tensor
//   may be empty only in the batch dim of the k+2-dim form;
// - the 2-d backward operators reject a padding value above 7 for BFLOAT16;
// - constant: `pad` even, at most twice self's dims, negative values allowed
//   (they cut), any dtype.
// Dtypes are those of the docs for Atlas A2/A3: reflection all but the
// unsigned and 8-bit float types, replication the same without BOOL, the
// backward operators the floating and complex types.
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/reflection_pad1d.h>
#include <ATen/ops/reflection_pad1d_backward.h>
#include <ATen/ops/reflection_pad2d.h>
#include <ATen/ops/reflection_pad2d_backward.h>
#include <ATen/ops/reflection_pad3d.h>
#include <ATen/ops/reflection_pad3d_backward.h>
#include <ATen/ops/replication_pad1d.h>
#include <ATen/ops/replication_pad1d_backward.h>
#include <ATen/ops/replication_pad2d.h>
#include <ATen/ops/replication_pad2d_backward.h>
#include <ATen/ops/replication_pad3d.h>
#include <ATen/ops/replication_pad3d_backward.h>

#include <functional>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnConstantPadNd.h"
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

using namespace fsim::op;

namespace {

constexpr DTypes kReflectionTypes = kAll;
constexpr DTypes kReplicationTypes = kNumeric | kComplex;
constexpr DTypes kPadGradTypes = kFloating | kComplex;

int64_t padRankOf(const aclTensor* t) { return t == nullptr ? -1 : static_cast<int64_t>(t->viewDims.size()); }

// self padded by `pad` (pairs from the last dim backwards).
std::vector<int64_t> paddedSizes(const std::vector<int64_t>& sizes, const std::vector<int64_t>& pad) {
  std::vector<int64_t> out = sizes;
  for (size_t i = 0; i < pad.size() / 2 && i < out.size(); ++i) {
    out[out.size() - 1 - i] += pad[2 * i] + pad[2 * i + 1];
  }
  return out;
}

// The checks of a k-d reflection or replication pad, forward or backward:
// `self` is the unpadded tensor, `padded` the padded one.
void checkPad(Op& op, size_t k, const aclTensor* self, const std::vector<int64_t>& padding,
              const aclTensor* padded) {
  const int64_t rank = padRankOf(self);
  op.require(self == nullptr || rank == static_cast<int64_t>(k) + 1 || rank == static_cast<int64_t>(k) + 2,
             k == 1 ? "self must have 2 or 3 dims" : k == 2 ? "self must have 3 or 4 dims" : "self must have 4 or 5 dims");
  op.require(padding.size() == 2 * k, k == 1 ? "padding must have 2 values" : k == 2 ? "padding must have 4 values"
                                                                               : "padding must have 6 values");
  op.require(self == nullptr || padded == nullptr || self->dtype == padded->dtype,
             "the padded and unpadded tensors must have one dtype");
  if (self == nullptr || padded == nullptr || padding.size() != 2 * k || rank < static_cast<int64_t>(k) + 1) return;
  bool fits = true;
  for (size_t i = 0; i < k; ++i) {
    const int64_t dim = self->viewDims[rank - 1 - i];
    fits = fits && padding[2 * i] >= 0 && padding[2 * i + 1] >= 0 && padding[2 * i] < dim && padding[2 * i + 1] < dim;
  }
  op.require(fits, "each padding value must be >= 0 and smaller than the dim it pads");
  bool emptyFits = true;
  for (int64_t d = 0; d < rank; ++d) {
    const bool batch = d == 0 && rank == static_cast<int64_t>(k) + 2;
    if (!batch) emptyFits = emptyFits && self->viewDims[d] > 0;
  }
  op.require(emptyFits, "self may be empty only in the batch dim");
  op.require(padded->viewDims == paddedSizes(self->viewDims, padding),
             "the padded tensor's shape must be self's plus the padding");
}

using PadFn = std::function<at::Tensor(const at::Tensor&, at::IntArrayRef)>;
using PadGradFn = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, at::IntArrayRef)>;

aclnnStatus padForward(const char* name, size_t k, DTypes dtypes, PadFn fn, const aclTensor* self,
                       const aclIntArray* padding, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op(name, workspaceSize, executor);
  op.arg("self", self, dtypes).arg("padding", padding).arg("out", out, dtypes);
  checkPad(op, k, self, intsOf(padding), out);
  return op.build([fn = std::move(fn), pad = intsOf(padding)](Views& v) { v["out"].copy_(fn(v["self"], pad)); });
}

aclnnStatus padBackward(const char* name, size_t k, PadGradFn fn, const aclTensor* gradOutput, const aclTensor* self,
                        const aclIntArray* padding, aclTensor* gradInput, uint64_t* workspaceSize,
                        aclOpExecutor** executor) {
  Op op(name, workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kPadGradTypes).arg("self", self, kPadGradTypes).arg("padding", padding)
      .arg("gradInput", gradInput, kPadGradTypes);
  const std::vector<int64_t> pad = intsOf(padding);
  checkPad(op, k, self, pad, gradOutput);
  op.require(gradInput == nullptr || self == nullptr || gradInput->viewDims == self->viewDims,
             "gradInput must have self's shape");
  op.require(gradInput == nullptr || self == nullptr || gradInput->dtype == self->dtype,
             "gradInput must have self's dtype");
  if (k == 2 && self != nullptr && self->dtype == ACL_BF16) {
    bool small = true;
    for (const int64_t p : pad) small = small && p <= 7;
    op.require(small, "a BFLOAT16 padding value must be at most 7");
  }
  return op.build([fn = std::move(fn), pad](Views& v) {
    const at::Tensor& grad = v["gradOutput"];
    // Accumulated in float for half and bfloat16, rounded once.
    const bool reduced = grad.scalar_type() == at::kHalf || grad.scalar_type() == at::kBFloat16;
    v["gradInput"].copy_(fn(reduced ? grad.to(at::kFloat) : grad, reduced ? v["self"].to(at::kFloat) : v["self"], pad));
  });
}

}  // namespace

aclnnStatus aclnnConstantPadNdGetWorkspaceSize(const aclTensor* self, const aclIntArray* pad, const aclScalar* value,
                                               aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnConstantPadNd", workspaceSize, executor);
  op.arg("self", self).arg("pad", pad).arg("value", value).arg("out", out);
  const std::vector<int64_t> sizes = intsOf(pad);
  op.require(self == nullptr || out == nullptr || self->dtype == out->dtype, "out must have the dtype of self");
  op.require(sizes.size() % 2 == 0 && static_cast<int64_t>(sizes.size()) <= 2 * std::max<int64_t>(padRankOf(self), 0),
             "pad must have an even number of values, at most twice self's dims");
  if (self != nullptr && out != nullptr && sizes.size() % 2 == 0 && sizes.size() <= 2 * self->viewDims.size()) {
    const std::vector<int64_t> expected = paddedSizes(self->viewDims, sizes);
    bool nonNegative = true;
    for (const int64_t d : expected) nonNegative = nonNegative && d >= 0;
    op.require(nonNegative, "a negative pad cuts more than the dim holds");
    op.require(out->viewDims == expected, "out's shape must be self's plus the padding");
  }
  return op.build([sizes, value = scalarOf(value)](Views& v) {
    v["out"].copy_(at::constant_pad_nd(v["self"], sizes, value));
  });
}
FSIM_PHASE2(aclnnConstantPadNd)

// ---- reflection ---------------------------------------------------------------------

aclnnStatus aclnnReflectionPad1dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padForward("aclnnReflectionPad1d", 1, kReflectionTypes, [](auto& t, auto p) { return at::reflection_pad1d(t, p); },
                    self, padding, out, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReflectionPad1d)

aclnnStatus aclnnReflectionPad2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padForward("aclnnReflectionPad2d", 2, kReflectionTypes, [](auto& t, auto p) { return at::reflection_pad2d(t, p); },
                    self, padding, out, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReflectionPad2d)

aclnnStatus aclnnReflectionPad3dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padForward("aclnnReflectionPad3d", 3, kReflectionTypes, [](auto& t, auto p) { return at::reflection_pad3d(t, p); },
                    self, padding, out, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReflectionPad3d)

aclnnStatus aclnnReflectionPad1dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                         const aclIntArray* padding, aclTensor* gradInput,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padBackward("aclnnReflectionPad1dBackward", 1,
                     [](auto& g, auto& s, auto p) { return at::reflection_pad1d_backward(g, s, p); }, gradOutput, self,
                     padding, gradInput, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReflectionPad1dBackward)

aclnnStatus aclnnReflectionPad2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                         const aclIntArray* padding, aclTensor* gradInput,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padBackward("aclnnReflectionPad2dBackward", 2,
                     [](auto& g, auto& s, auto p) { return at::reflection_pad2d_backward(g, s, p); }, gradOutput, self,
                     padding, gradInput, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReflectionPad2dBackward)

aclnnStatus aclnnReflectionPad3dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                         const aclIntArray* padding, aclTensor* gradInput,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padBackward("aclnnReflectionPad3dBackward", 3,
                     [](auto& g, auto& s, auto p) { return at::reflection_pad3d_backward(g, s, p); }, gradOutput, self,
                     padding, gradInput, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReflectionPad3dBackward)

// ---- replication --------------------------------------------------------------------

aclnnStatus aclnnReplicationPad1dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding, aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padForward("aclnnReplicationPad1d", 1, kReplicationTypes,
                    [](auto& t, auto p) { return at::replication_pad1d(t, p); }, self, padding, out, workspaceSize,
                    executor);
}
FSIM_PHASE2(aclnnReplicationPad1d)

aclnnStatus aclnnReplicationPad2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding, aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padForward("aclnnReplicationPad2d", 2, kReplicationTypes,
                    [](auto& t, auto p) { return at::replication_pad2d(t, p); }, self, padding, out, workspaceSize,
                    executor);
}
FSIM_PHASE2(aclnnReplicationPad2d)

aclnnStatus aclnnReplicationPad3dGetWorkspaceSize(const aclTensor* self, const aclIntArray* padding, aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padForward("aclnnReplicationPad3d", 3, kReplicationTypes,
                    [](auto& t, auto p) { return at::replication_pad3d(t, p); }, self, padding, out, workspaceSize,
                    executor);
}
FSIM_PHASE2(aclnnReplicationPad3d)

aclnnStatus aclnnReplicationPad1dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                          const aclIntArray* padding, aclTensor* gradInput,
                                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padBackward("aclnnReplicationPad1dBackward", 1,
                     [](auto& g, auto& s, auto p) { return at::replication_pad1d_backward(g, s, p); }, gradOutput,
                     self, padding, gradInput, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReplicationPad1dBackward)

aclnnStatus aclnnReplicationPad2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                          const aclIntArray* padding, aclTensor* gradInput,
                                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padBackward("aclnnReplicationPad2dBackward", 2,
                     [](auto& g, auto& s, auto p) { return at::replication_pad2d_backward(g, s, p); }, gradOutput,
                     self, padding, gradInput, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReplicationPad2dBackward)

aclnnStatus aclnnReplicationPad3dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                          const aclIntArray* padding, aclTensor* gradInput,
                                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
  return padBackward("aclnnReplicationPad3dBackward", 3,
                     [](auto& g, auto& s, auto p) { return at::replication_pad3d_backward(g, s, p); }, gradOutput,
                     self, padding, gradInput, workspaceSize, executor);
}
FSIM_PHASE2(aclnnReplicationPad3dBackward)
