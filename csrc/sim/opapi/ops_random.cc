// Random fills: aclnnInplaceUniform, aclnnInplaceNormal, aclnnInplaceBernoulli,
// aclnnInplaceBernoulliTensor, aclnnInplaceRandom, aclnnMultinomial, aclnnRandperm.
//
// The values depend only on (seed, offset), as on the device: the kernel
// seeds a fresh CPU engine with a mix of both, so the same (seed, offset)
// gives the same values on every device and in every process.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/bernoulli.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/normal.h>
#include <ATen/ops/random.h>
#include <ATen/ops/randperm.h>
#include <ATen/ops/uniform.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnInplaceBernoulli.h"
#include "flagos/aclnn/aclnnInplaceBernoulliTensor.h"
#include "flagos/aclnn/aclnnInplaceNormal.h"
#include "flagos/aclnn/aclnnInplaceRandom.h"
#include "flagos/aclnn/aclnnInplaceUniform.h"
#include "flagos/aclnn/aclnnMultinomial.h"
#include "flagos/aclnn/aclnnRandperm.h"

using namespace fsim::op;

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

at::Generator engine(uint64_t seed, uint64_t offset) {
  return at::make_generator<at::CPUGeneratorImpl>(splitmix64(seed ^ splitmix64(offset)));
}

}  // namespace

aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor* selfRef, double from, double to, uint64_t seed,
                                                uint64_t offset, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceUniform", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric);
  op.require(from <= to, "from must not exceed to");
  return op.build([from, to, seed, offset](Views& v) {
    v["selfRef"].uniform_(from, to, engine(seed, offset));
  });
}
FSIM_PHASE2(aclnnInplaceUniform)

aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor* selfRef, float mean, float std, int64_t seed,
                                               int64_t offset, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceNormal", workspaceSize, executor);
  op.arg("selfRef", selfRef, kFloating);
  op.require(std >= 0, "std must be non-negative");
  return op.build([mean, std, seed, offset](Views& v) {
    v["selfRef"].normal_(mean, std, engine(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)));
  });
}
FSIM_PHASE2(aclnnInplaceNormal)

aclnnStatus aclnnInplaceBernoulliGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* prob, int64_t seed,
                                                  int64_t offset, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceBernoulli", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("prob", prob, kFloating);
  const double p = scalarOf(prob).toDouble();
  op.require(p >= 0 && p <= 1, "prob must be in [0, 1]");
  return op.build([p, seed, offset](Views& v) {
    v["selfRef"].bernoulli_(p, engine(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)));
  });
}
FSIM_PHASE2(aclnnInplaceBernoulli)

aclnnStatus aclnnInplaceBernoulliTensorGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* prob, int64_t seed,
                                                        int64_t offset, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor) {
  Op op("aclnnInplaceBernoulliTensor", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("prob", prob, kFloating);
  return op.build([seed, offset](Views& v) {
    v["selfRef"].bernoulli_(v["prob"], engine(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)));
  });
}
FSIM_PHASE2(aclnnInplaceBernoulliTensor)

aclnnStatus aclnnInplaceRandomGetWorkspaceSize(const aclTensor* selfRef, int64_t from, int64_t to, int64_t seed,
                                               int64_t offset, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceRandom", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric | kBool);
  op.require(from < to, "from must be less than to");
  return op.build([from, to, seed, offset](Views& v) {
    v["selfRef"].random_(from, to, engine(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)));
  });
}
FSIM_PHASE2(aclnnInplaceRandom)

// aclnnMultinomial (ops-math random/stateless_sample_multinomial): self is
// (C) or (N, C) float16/bfloat16/float/double with C <= 2^24; out int64 of
// self's rank, last dimension numsamples (> 0; <= C without replacement) and
// self's N. Anything else is ACLNN_ERR_PARAM_INVALID.
aclnnStatus aclnnMultinomialGetWorkspaceSize(const aclTensor* self, int64_t numsamples, bool replacement, int64_t seed,
                                             int64_t offset, aclTensor* out, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnMultinomial", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("out", out, DTypes{ACL_INT64});
  const size_t rank = self != nullptr ? self->viewDims.size() : 1;
  op.require(rank == 1 || rank == 2, "self must be 1-d or 2-d");
  op.require(out == nullptr || out->viewDims.size() == rank, "self and out must have the same rank");
  op.require(numsamples > 0, "numsamples must be positive");
  const int64_t categories = self != nullptr && rank >= 1 && rank <= 2 ? self->viewDims.back() : 0;
  op.require(replacement || numsamples <= categories, "numsamples may not exceed the categories without replacement");
  op.require(categories <= (int64_t{1} << 24), "self's last dimension may not exceed 2^24");
  op.require(out == nullptr || out->viewDims.empty() || out->viewDims.back() == numsamples,
             "out's last dimension must be numsamples");
  op.require(out == nullptr || self == nullptr || rank != 2 || out->viewDims.size() != 2 ||
                 out->viewDims[0] == self->viewDims[0],
             "out's first dimension must be self's");
  return op.build([numsamples, replacement, seed, offset](Views& v) {
    at::multinomial_out(v["out"], v["self"], numsamples, replacement,
                        engine(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)));
  });
}
FSIM_PHASE2(aclnnMultinomial)

// CANN's checks: n >= 0, out of shape [n] and a real dtype.
aclnnStatus aclnnRandpermGetWorkspaceSize(int64_t n, int64_t seed, int64_t offset, aclTensor* out,
                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnRandperm", workspaceSize, executor);
  op.arg("out", out, kNumeric);
  op.require(n >= 0, "n must be non-negative");
  op.require(!out || (out->viewDims.size() == 1 && out->viewDims[0] == n), "out must have shape [n]");
  return op.build([n, seed, offset](Views& v) {
    at::randperm_out(v["out"], n, engine(static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)));
  });
}
FSIM_PHASE2(aclnnRandperm)
