// _fused_adamw_ and _fused_adam_: the step of torch.optim.AdamW / Adam with
// fused=True (transformers' Trainer default, optim="adamw_torch_fused"),
// one aclnnApplyAdamWV2 launch per parameter.
//
// CANN's operator is AdamW's step without a gradient scale. The rest of
// ATen's fused kernel is composed around it, with the CPU kernel's order:
// - found_inf == 1 skips the whole step (nothing is written);
// - grad_scale divides each gradient in place before its step, as ATen's
//   kernel stores the unscaled gradient;
// - Adam's L2 weight decay adds weight_decay * param to the (possibly
//   negated) gradient, in a temporary, and launches the operator with no
//   decay and no negation.
//
// A parameter list may span devices: the tensors of one parameter (param,
// grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step) must share a device, and
// each parameter launches on that device.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/neg.h>
#include <c10/util/Exception.h>

#include <optional>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnApplyAdamWV2.h"

namespace flagos {
namespace {

void check_list(const char* op, const char* name, at::TensorList list, size_t expected) {
  TORCH_CHECK(list.size() == expected, op, ": expected ", expected, " tensors in ", name, " (one per parameter), got ",
              list.size());
}

// CANN's operator takes 1-8 dims: a 0-dim parameter (a scalar) is viewed as 1-D.
at::Tensor scalar_as_1d(const at::Tensor& t) { return t.defined() && t.dim() == 0 ? t.view({1}) : t; }

void fused_adam_step(const char* op, bool decoupled_decay, at::TensorList params, at::TensorList grads,
                     at::TensorList exp_avgs, at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                     at::TensorList state_steps, double lr, double beta1, double beta2, double weight_decay,
                     double eps, bool amsgrad, bool maximize, const std::optional<at::Tensor>& grad_scale,
                     const std::optional<at::Tensor>& found_inf) {
  const size_t n = params.size();
  check_list(op, "grads", grads, n);
  check_list(op, "exp_avgs", exp_avgs, n);
  check_list(op, "exp_avg_sqs", exp_avg_sqs, n);
  check_list(op, "max_exp_avg_sqs", max_exp_avg_sqs, amsgrad ? n : 0);
  check_list(op, "state_steps", state_steps, n);
  if (n == 0) {
    return;
  }
  // CANN's operator has no found_inf: the step is skipped on the host, which
  // reads the flag (a GradScaler step synchronizes here; without one, nothing).
  if (found_inf.has_value() && found_inf->defined() && found_inf->item<float>() == 1.0f) {
    return;
  }
  const bool scaled = grad_scale.has_value() && grad_scale->defined();
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& param = params[i];
    const at::Tensor max_exp_avg_sq = amsgrad ? max_exp_avg_sqs[i] : at::Tensor();
    check_same_device(op, {{"param", param},
                           {"grad", grads[i]},
                           {"exp_avg", exp_avgs[i]},
                           {"exp_avg_sq", exp_avg_sqs[i]},
                           {"max_exp_avg_sq", amsgrad ? std::optional<at::Tensor>(max_exp_avg_sq) : std::nullopt},
                           {"state_step", state_steps[i]}});
    for (const at::Tensor& t : {grads[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sq}) {
      TORCH_CHECK(!t.defined() || (t.sizes() == param.sizes() && t.scalar_type() == param.scalar_type()), op,
                  ": each parameter's grad, exp_avg, exp_avg_sq and max_exp_avg_sq must have its shape ",
                  param.sizes(), " and dtype ", param.scalar_type(), ", got ", t.sizes(), " and ", t.scalar_type());
    }
    TORCH_CHECK(state_steps[i].numel() == 1, op, ": each state_step must have one element, got ",
                state_steps[i].numel());
    if (param.numel() == 0) {
      continue;
    }
    if (scaled) {
      grads[i].div_(grad_scale->to(grads[i].device()));
    }
    at::Tensor grad = grads[i];
    bool negate = maximize;
    double decay = weight_decay;
    if (!decoupled_decay && weight_decay != 0) {
      grad = (maximize ? grad.neg() : grad).add(param, weight_decay);
      negate = false;
      decay = 0;
    }
    // A CPU step (a number) is copied to the launch device.
    const at::Tensor step = state_steps[i].to(param.device());
    // flagos-lint: allow-launch-device(each parameter launches on its own device)
    FLAGOS_GUARDED_LAUNCH(launch_device_of(param), aclnnApplyAdamWV2, scalar_as_1d(param), scalar_as_1d(exp_avgs[i]),
                          scalar_as_1d(exp_avg_sqs[i]), scalar_as_1d(max_exp_avg_sq), scalar_as_1d(grad), step,
                          static_cast<float>(lr), static_cast<float>(beta1), static_cast<float>(beta2),
                          static_cast<float>(decay), static_cast<float>(eps), amsgrad, negate);
  }
}


// The .tensor_lr overloads (torch.optim with a tensor lr, as LR schedulers
// that capture it use): CANN's operator takes lr as a float, so it is read on
// the host (a synchronization when lr lives on a flagos device).
double lr_value(const char* op, const at::Tensor& lr) {
  TORCH_CHECK(lr.numel() == 1, op, ": lr must have one element, got ", lr.numel());
  return lr.item<double>();
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

// One schema, two steps: AdamW's decoupled decay or Adam's L2 decay. The
// wrapper's device is the first parameter's; each parameter launches on its own.
void fused_adamw(const LaunchDevice& /*device*/, at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                 at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr,
                 double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  fused_adam_step("_fused_adamw_", true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void fused_adam(const LaunchDevice& /*device*/, at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr,
                double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  fused_adam_step("_fused_adam_", false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void fused_adamw_tensor_lr(const LaunchDevice& device, at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                           at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                           const at::Tensor& lr, double beta1, double beta2, double weight_decay, double eps,
                           bool amsgrad, bool maximize, const std::optional<at::Tensor>& grad_scale,
                           const std::optional<at::Tensor>& found_inf) {
  fused_adamw(device, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr_value("_fused_adamw_", lr),
              beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void fused_adam_tensor_lr(const LaunchDevice& device, at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                          at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                          const at::Tensor& lr, double beta1, double beta2, double weight_decay, double eps,
                          bool amsgrad, bool maximize, const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  fused_adam(device, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr_value("_fused_adam_", lr),
             beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

}  // namespace flagos::impl
