// Random fills: uniform_, normal_, bernoulli_ (float p / tensor p) and
// random_ (three overloads). torch.rand / randn / randint / bernoulli reach
// them through empty + the in-place fill; torch.randperm reaches
// randperm.generator_out the same way (ATen's composites allocate `out`).
//
// The generator is the caller's, else the default generator of self's
// device (runtime/generator.h); under its mutex the kernel reads the seed
// and advances the offset by the number of values drawn, then passes (seed,
// offset) to the ACLNN operator. Devices seeded alike draw alike, and
// drawing on one device leaves the others' offsets untouched.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/view_as_real.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "generated/impls.h"
#include "runtime/generator.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnInplaceBernoulli.h"
#include "flagos/aclnn/aclnnInplaceBernoulliTensor.h"
#include "flagos/aclnn/aclnnInplaceNormal.h"
#include "flagos/aclnn/aclnnInplaceRandom.h"
#include "flagos/aclnn/aclnnInplaceUniform.h"
#include "flagos/aclnn/aclnnMultinomial.h"
#include "flagos/aclnn/aclnnRandperm.h"

namespace flagos {
namespace {

// The (seed, offset) for drawing self.numel() values on self's device.
std::pair<uint64_t, uint64_t> next_seed_offset(const at::Tensor& self, const std::optional<at::Generator>& generator) {
  TORCH_CHECK(self.is_privateuseone(), "flagos: a random fill needs a flagos tensor, got ", self.device());
  auto* impl = at::get_generator_or_default<FlagosGeneratorImpl>(generator, default_generator(self.device().index()));
  // Philox-style: each call reserves a multiple of 4 values.
  const uint64_t increment = (static_cast<uint64_t>(self.numel()) + 3) / 4 * 4;
  std::lock_guard<std::mutex> lock(impl->mutex_);
  return impl->philox_engine_inputs(increment);
}

// The exclusive upper bound of random_() without `to`: 2^digits + 1 for a
// floating type (every integer up to 2^digits is exact), the largest value
// for an integral one.
int64_t default_random_to(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return (int64_t{1} << std::numeric_limits<float>::digits) + 1;
    case at::kDouble: return (int64_t{1} << std::numeric_limits<double>::digits) + 1;
    case at::kHalf: return (int64_t{1} << 11) + 1;
    case at::kBFloat16: return (int64_t{1} << 8) + 1;
    case at::kBool: return 2;
    case at::kByte: return int64_t{std::numeric_limits<uint8_t>::max()} + 1;
    case at::kChar: return int64_t{std::numeric_limits<int8_t>::max()} + 1;
    case at::kShort: return int64_t{std::numeric_limits<int16_t>::max()} + 1;
    case at::kInt: return int64_t{std::numeric_limits<int32_t>::max()} + 1;
    default: return std::numeric_limits<int64_t>::max();
  }
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor& uniform_(const LaunchDevice& device, at::Tensor& self, double from, double to,
                     std::optional<at::Generator> generator) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  check_written(self, {});
  if (self.numel() == 0) {
    return self;
  }
  if (self.is_complex() && !self.is_conj()) {
    // As the CPU: both parts drawn from [from, to).
    at::Tensor parts = at::view_as_real(self);
    uniform_(device, parts, from, to, generator);
    return self;
  }
  const auto [seed, offset] = next_seed_offset(self, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceUniform, self, from, to, seed, offset);
  return self;
}

at::Tensor& normal_(const LaunchDevice& device, at::Tensor& self, double mean, double std,
                    std::optional<at::Generator> generator) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  check_written(self, {});
  if (self.is_complex() && !self.is_conj() && self.numel() > 0) {
    // As the CPU (torch.randn(..., dtype=torch.complex64)): each part is
    // normal with std / sqrt(2), so the complex value has variance std^2.
    at::Tensor parts = at::view_as_real(self);
    normal_(device, parts, mean, std / std::sqrt(2.0), generator);
    return self;
  }
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || self.is_complex(),
              "normal_ expects a floating-point tensor, got ", self.scalar_type());
  if (self.numel() == 0) {
    return self;
  }
  const auto [seed, offset] = next_seed_offset(self, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceNormal, self, mean, std, static_cast<int64_t>(seed),
                        static_cast<int64_t>(offset));
  return self;
}

at::Tensor& bernoulli_float_(const LaunchDevice& device, at::Tensor& self, double p,
                             std::optional<at::Generator> generator) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  check_written(self, {});
  if (self.numel() == 0) {
    return self;
  }
  const auto [seed, offset] = next_seed_offset(self, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceBernoulli, self, at::Scalar(p), static_cast<int64_t>(seed),
                        static_cast<int64_t>(offset));
  return self;
}

at::Tensor& bernoulli_tensor_(const LaunchDevice& device, at::Tensor& self, const at::Tensor& p,
                              std::optional<at::Generator> generator) {
  if (p.is_cpu() && p.dim() == 0) {
    return bernoulli_float_(device, self, p.item<double>(), generator);
  }
  check_written(self, {{"p", p}});
  if (self.numel() == 0) {
    return self;
  }
  const at::Tensor prob = p.is_floating_point() ? p.expand_as(self) : p.to(at::kFloat).expand_as(self);
  const auto [seed, offset] = next_seed_offset(self, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceBernoulliTensor, self, prob, static_cast<int64_t>(seed),
                        static_cast<int64_t>(offset));
  return self;
}

at::Tensor& random_from_(const LaunchDevice& device, at::Tensor& self, int64_t from, std::optional<int64_t> to,
                         std::optional<at::Generator> generator) {
  const int64_t end = to.value_or(default_random_to(self.scalar_type()));
  TORCH_CHECK(from < end, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", end);
  check_written(self, {});
  if (self.numel() == 0) {
    return self;
  }
  const auto [seed, offset] = next_seed_offset(self, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceRandom, self, from, end, static_cast<int64_t>(seed),
                        static_cast<int64_t>(offset));
  return self;
}

at::Tensor& random_to_(const LaunchDevice& device, at::Tensor& self, int64_t to,
                       std::optional<at::Generator> generator) {
  return random_from_(device, self, 0, to, generator);
}

at::Tensor& random_(const LaunchDevice& device, at::Tensor& self, std::optional<at::Generator> generator) {
  return random_from_(device, self, 0, std::nullopt, generator);
}

// Dropout: the mask is a bernoulli_(1 - p) fill of a bool tensor on the
// input's device; the product and the scale are the device's mul kernels.
std::tuple<at::Tensor, at::Tensor> native_dropout(const LaunchDevice& device, const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::Tensor mask = empty_on(device, input.sizes(), at::kBool);
  if (!train.value_or(true) || p == 0) {
    mask.fill_(true);
    return {input.clone(), mask};
  }
  if (p == 1) {
    mask.zero_();
    return {input.mul(mask), mask};
  }
  bernoulli_float_(device, mask, 1 - p, std::nullopt);
  return {input.mul(mask).mul(at::Scalar(1.0 / (1.0 - p))), mask};
}

at::Tensor native_dropout_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& mask,
                                   double scale) {
  return grad_output.mul(mask).mul(at::Scalar(scale));
}

// multinomial (LLM sampling: generate(do_sample=True)) on aclnnMultinomial,
// with ATen's checks first, so bad probabilities raise ATen's errors.
at::Tensor multinomial(const LaunchDevice& device, const at::Tensor& self, int64_t n_sample, bool replacement,
                       std::optional<at::Generator> generator) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "multinomial only supports floating-point dtypes for input, got: ",
              self.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= categories,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes.back() = n_sample;
  at::Tensor out = empty_on(device, sizes, at::kLong);
  if (out.numel() == 0) {
    return out;
  }
  // Each row draws n_sample values.
  const auto [seed, offset] = next_seed_offset(out, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnMultinomial, self, n_sample, replacement, static_cast<int64_t>(seed),
                        static_cast<int64_t>(offset), out);
  return out;
}

// randperm_out_cpu's checks (TensorFactories.cpp), then aclnnRandperm.
at::Tensor& randperm(const LaunchDevice& device, int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!generator.has_value() || out.device() == generator->device(), "Expected a '", out.device(),
              "' generator device but found '", generator->device(), "'");
  // ATen's precision check only reads out's dtype: a CPU stand-in, so that it
  // allocates nothing on the device.
  at::native::check_supported_max_int_with_precision(n, at::empty({0}, out.options().device(at::kCPU)));
  check_written(out, {});
  at::native::resize_output(out, {n});
  if (n == 0) {
    return out;
  }
  const auto [seed, offset] = next_seed_offset(out, generator);
  FLAGOS_GUARDED_LAUNCH(device, aclnnRandperm, n, static_cast<int64_t>(seed), static_cast<int64_t>(offset), out);
  return out;
}

}  // namespace flagos::impl
