// Matrix products of the handwritten kernels: aclnnMm, aclnnBatchMatMul and
// aclnnMatmul. Like ops_matmul.cc, the simulator computes in the input dtype
// whatever cubeMathType says.
#include <ATen/ops/bmm.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mm.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnBatchMatMul.h"
#include "flagos/aclnn/aclnnMatmul.h"
#include "flagos/aclnn/aclnnMm.h"

using namespace fsim::op;

namespace {

// 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32.
bool hw_valid_cube_math_type(int8_t cubeMathType) { return cubeMathType >= 0 && cubeMathType <= 3; }

bool has_rank(const aclTensor* t, size_t rank) { return t == nullptr || t->viewDims.size() == rank; }

}  // namespace

aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out, int8_t cubeMathType,
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMm", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("mat2", mat2, kFloating).arg("out", out, kFloating);
  op.require(has_rank(self, 2) && has_rank(mat2, 2) && has_rank(out, 2), "self, mat2 and out must be 2-D");
  op.require(hw_valid_cube_math_type(cubeMathType), "cubeMathType must be 0..3");
  return op.build([](Views& v) { at::mm_out(v["out"], v["self"], v["mat2"]); });
}
FSIM_PHASE2(aclnnMm)

aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                             int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnBatchMatMul", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("mat2", mat2, kFloating).arg("out", out, kFloating);
  op.require(has_rank(self, 3) && has_rank(mat2, 3) && has_rank(out, 3), "self, mat2 and out must be 3-D");
  op.require(hw_valid_cube_math_type(cubeMathType), "cubeMathType must be 0..3");
  return op.build([](Views& v) { at::bmm_out(v["out"], v["self"], v["mat2"]); });
}
FSIM_PHASE2(aclnnBatchMatMul)

aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                        int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMatmul", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("mat2", mat2, kFloating).arg("out", out, kFloating);
  op.require(hw_valid_cube_math_type(cubeMathType), "cubeMathType must be 0..3");
  // at::matmul_out would resize `out` on its way through a vector operand.
  return op.build([](Views& v) { v["out"].copy_(at::matmul(v["self"], v["mat2"])); });
}
FSIM_PHASE2(aclnnMatmul)
