// Batch normalization, forward and backward: native_batch_norm and
// native_batch_norm_backward (aclnnBatchNorm, aclnnBatchNormBackward).
//
// F.batch_norm of a flagos tensor reaches native_batch_norm in training and
// in evaluation (ATen's _batch_norm_impl_index), and autograd calls
// native_batch_norm_backward with the saved statistics.
//
// The saved statistics: on Atlas A2/A3 aclnnBatchNorm writes the batch's
// biased variance where its parameter says saveInvstd, and
// aclnnBatchNormBackward reads that variance back (CANN's docs and its
// BNTrainingUpdate/BNTrainingUpdateGrad). ATen's third result is
// 1 / sqrt(var + eps), which autograd hands back to the backward and users
// may read: the forward converts the variance to it, the backward converts it
// back (var = 1 / invstd^2 - eps; the operator adds eps again), both on the
// device.
//
// Evaluation mode returns empty [0] statistics, as ATen's CPU kernel, and
// needs the running statistics. Mixed dtypes (a half input with float
// parameters) keep float statistics, as ATen; the backward then runs in
// float, since on A2/A3 the operator wants the parameters in gradOut's dtype.
#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnBatchNorm.h"
#include "flagos/aclnn/aclnnBatchNormBackward.h"

namespace flagos {
namespace {

using OptTensor = std::optional<at::Tensor>;

bool present(const OptTensor& t) { return t.has_value() && t->defined(); }

// The operand's 1-d shape of C elements, as ATen checks it.
void check_channels(const char* op, const char* name, const OptTensor& t, int64_t channels) {
  if (present(t)) {
    TORCH_CHECK(t->dim() == 1 && t->numel() == channels, op, ": expected ", name, " to have ", channels,
                " elements (one per channel of the input), got sizes ", t->sizes());
  }
}

// ATen's is_mixed_type: a reduced-precision input with float parameters.
bool mixed(const at::Tensor& input, std::initializer_list<const OptTensor*> params) {
  for (const OptTensor* p : params) {
    if (present(*p) && p->value().scalar_type() != input.scalar_type()) {
      return true;
    }
  }
  return false;
}

void check_input(const char* op, const at::Tensor& input) {
  TORCH_CHECK(input.dim() >= 2 && input.dim() <= 8, op, ": expected an input of 2 to 8 dims (N, C, ...), got ",
              input.dim(), " dims");
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(const LaunchDevice& device, const at::Tensor& input,
                                                                 const OptTensor& weight, const OptTensor& bias,
                                                                 const OptTensor& running_mean,
                                                                 const OptTensor& running_var, bool training,
                                                                 double momentum, double eps) {
  constexpr const char* op = "native_batch_norm";
  check_input(op, input);
  const int64_t channels = input.size(1);
  check_channels(op, "weight", weight, channels);
  check_channels(op, "bias", bias, channels);
  check_channels(op, "running_mean", running_mean, channels);
  check_channels(op, "running_var", running_var, channels);
  TORCH_CHECK(training || (present(running_mean) && present(running_var)), op,
              ": running_mean and running_var must be defined in evaluation mode");
  const at::ScalarType stat_type =
      mixed(input, {&weight, &bias, &running_mean, &running_var}) ? at::kFloat : input.scalar_type();
  at::Tensor out = empty_on(device, input.sizes(), input.scalar_type());
  at::Tensor save_mean = empty_on(device, {training ? channels : 0}, stat_type);
  at::Tensor save_var = empty_on(device, {training ? channels : 0}, stat_type);
  if (training) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnBatchNorm, input, weight, bias, running_mean, running_var, training, momentum,
                          eps, out, save_mean, save_var);
    // The operator's saveInvstd is the batch variance (Atlas A2/A3): ATen's is 1 / sqrt(var + eps).
    return {out, save_mean, save_var.add(eps).rsqrt_()};
  }
  const at::Tensor no_stat;
  FLAGOS_GUARDED_LAUNCH(device, aclnnBatchNorm, input, weight, bias, running_mean, running_var, training, momentum,
                        eps, out, no_stat, no_stat);
  return {out, save_mean, save_var};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const LaunchDevice& device, const at::Tensor& grad_out, const at::Tensor& input, const OptTensor& weight,
    const OptTensor& running_mean, const OptTensor& running_var, const OptTensor& save_mean,
    const OptTensor& save_invstd, bool train, double eps, std::array<bool, 3> output_mask) {
  constexpr const char* op = "native_batch_norm_backward";
  check_input(op, input);
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out has sizes ", grad_out.sizes(), ", input ",
              input.sizes());
  const int64_t channels = input.size(1);
  check_channels(op, "weight", weight, channels);
  if (train) {
    TORCH_CHECK(present(save_mean) && present(save_invstd), op, ": training needs save_mean and save_invstd");
    check_channels(op, "save_mean", save_mean, channels);
    check_channels(op, "save_invstd", save_invstd, channels);
  } else {
    TORCH_CHECK(present(running_mean) && present(running_var), op,
                ": evaluation mode needs running_mean and running_var");
    check_channels(op, "running_mean", running_mean, channels);
    check_channels(op, "running_var", running_var, channels);
  }
  const at::ScalarType param_type = present(weight) ? weight->scalar_type() : input.scalar_type();
  at::Tensor grad_input = output_mask[0] ? empty_on(device, input.sizes(), input.scalar_type()) : at::Tensor();
  at::Tensor grad_weight = output_mask[1] ? empty_on(device, {channels}, param_type) : at::Tensor();
  at::Tensor grad_bias = output_mask[2] ? empty_on(device, {channels}, param_type) : at::Tensor();
  if (!output_mask[0] && !output_mask[1] && !output_mask[2]) {
    return {grad_input, grad_weight, grad_bias};
  }
  // On A2/A3 every operand has gradOut's dtype: mixed dtypes run in float.
  const bool widen = mixed(input, {&weight, &running_mean, &running_var, &save_mean, &save_invstd}) ||
                     grad_out.scalar_type() != input.scalar_type();
  auto as = [widen](const OptTensor& t) -> OptTensor {
    return present(t) ? OptTensor(widen ? t->to(at::kFloat) : *t) : std::nullopt;
  };
  const at::Tensor g = widen ? grad_out.to(at::kFloat) : grad_out;
  const at::Tensor x = widen ? input.to(at::kFloat) : input;
  at::Tensor dx = grad_input.defined() && widen ? empty_on(device, input.sizes(), at::kFloat) : grad_input;
  at::Tensor dw = grad_weight.defined() && widen ? empty_on(device, {channels}, at::kFloat) : grad_weight;
  at::Tensor db = grad_bias.defined() && widen ? empty_on(device, {channels}, at::kFloat) : grad_bias;
  // The operator reads the batch variance where ATen passes 1 / sqrt(var + eps).
  const OptTensor mean = train ? as(save_mean) : std::nullopt;
  const OptTensor var = train ? OptTensor(as(save_invstd)->mul(*as(save_invstd)).reciprocal_().add_(-eps))
                              : std::nullopt;
  FLAGOS_GUARDED_LAUNCH(device, aclnnBatchNormBackward, g, x, as(weight), as(running_mean), as(running_var), mean, var,
                        train, eps, output_mask, dx, dw, db);
  if (widen) {
    if (grad_input.defined()) grad_input.copy_(dx);
    if (grad_weight.defined()) grad_weight.copy_(dw);
    if (grad_bias.defined()) grad_bias.copy_(db);
  }
  return {grad_input, grad_weight, grad_bias};
}

// The overloads that torch.export and torch.compile decompose batch norm
// into (eager F.batch_norm reaches native_batch_norm): the same kernels.
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_legit(
    const LaunchDevice& device, const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
    at::Tensor& running_mean, at::Tensor& running_var, bool training, double momentum, double eps) {
  return native_batch_norm(device, input, weight, bias, running_mean, running_var, training, momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_legit(const LaunchDevice& device,
                                                                       const at::Tensor& input,
                                                                       const OptTensor& weight, const OptTensor& bias,
                                                                       bool training, double momentum, double eps) {
  return native_batch_norm(device, input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
}

// Training with the running statistics updated; `reserve` is empty, as on the CPU.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batch_norm_with_update(
    const LaunchDevice& device, const at::Tensor& input, const OptTensor& weight, const OptTensor& bias,
    at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps) {
  auto [out, mean, invstd] =
      native_batch_norm(device, input, weight, bias, running_mean, running_var, true, momentum, eps);
  const at::Tensor reserve = empty_on(device, {0}, at::kByte);
  return std::make_tuple(out, mean, invstd, reserve);
}

// `update` says the forward trained (batch statistics), as the CPU reads it.
std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const LaunchDevice& device, const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
    const OptTensor& running_mean, const OptTensor& running_var, const OptTensor& save_mean, const OptTensor& save_var,
    bool update, double eps, std::array<bool, 3> output_mask, const at::Tensor& reserve) {
  return native_batch_norm_backward(device, grad_out, input, weight.defined() ? OptTensor(weight) : std::nullopt,
                                    running_mean, running_var, save_mean, save_var, update, eps, output_mask);
}

}  // namespace flagos::impl
