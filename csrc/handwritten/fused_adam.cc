// _fused_adamw_ and _fused_adam_: the step of torch.optim.AdamW / Adam with
// fused=True (transformers' Trainer default, optim="adamw_torch_fused"),
// one aclnnFusedAdamw launch per (device, dtype) group of parameters.
//
// CANN's operator is AdamW's step over tensor lists, with ATen's found_inf
// (read on the device: no host synchronization) and a gradient scale. lr
// and the other hyperparameters are attributes: a scheduler's new lr is a
// new executor, one per group and step. The rest of ATen's fused kernel is
// composed around it, in the CPU kernel's order:
// - grad_scale: ATen stores each gradient unscaled, CANN's operator only
//   reads it; so the gradients are divided in place first (one
//   aclnnForeachDivScalar per group, the divisor a device tensor that is 1
//   when found_inf == 1, which leaves them as they are) and the operator
//   gets no scale;
// - Adam's L2 weight decay adds weight_decay * param to the (possibly
//   negated) gradient, in temporaries, and launches the operator with no
//   decay and no negation.
//
// A parameter list may span devices: the tensors of one parameter (param,
// grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step) must share a device;
// each group launches on its own device.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/neg.h>
#include <c10/util/Exception.h>

#include <optional>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnForeachDivScalar.h"
#include "flagos/aclnn/aclnnFusedAdamw.h"

namespace flagos {
namespace {

void check_list(const char* op, const char* name, at::TensorList list, size_t expected) {
  TORCH_CHECK(list.size() == expected, op, ": expected ", expected, " tensors in ", name, " (one per parameter), got ",
              list.size());
}

// CANN's operator takes 1-8 dims: a 0-dim tensor (a scalar parameter) is viewed as 1-D.
at::Tensor as_1d_if_0d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

at::Tensor on_device(const at::Tensor& t, c10::DeviceIndex device) {
  return t.device() == flagos_device(device) ? t : t.to(flagos_device(device));
}

// The tensors of `list` in `group`, a 0-dim one viewed as 1-D.
std::vector<at::Tensor> members_of(at::TensorList list, const hw::Group& group) {
  std::vector<at::Tensor> picked = hw::pick(list, group);
  for (at::Tensor& t : picked) {
    t = as_1d_if_0d(t);
  }
  return picked;
}

// ATen's unscaling: each gradient divided by grad_scale in place, unless
// found_inf == 1 (the step is skipped and the gradients stay as they are).
// `found_inf` is on the group's device.
void unscale_gradients(const hw::Group& group, at::TensorList grads, const at::Tensor& grad_scale,
                       const std::optional<at::Tensor>& found_inf) {
  at::Tensor divisor = on_device(grad_scale, group.device).to(at::kFloat).reshape({1});
  if (found_inf.has_value()) {
    divisor = divisor.masked_fill(found_inf->reshape({1}).eq(1), 1);
  }
  // aclnnForeachDivScalar divides by a float32 divisor for float32 and
  // bfloat16 lists; a float16 list would need a float16 one, which rounds
  // where ATen does not: those, and strided gradients, divide one by one.
  std::vector<at::Tensor> listed;
  for (size_t i : group.members) {
    if (grads[i].is_contiguous() && group.dtype != at::kHalf) {
      listed.push_back(as_1d_if_0d(grads[i]));
    } else {
      grads[i].div_(divisor.reshape({}));
    }
  }
  if (!listed.empty()) {
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(launch_device_of(listed[0]), aclnnForeachDivScalar, listed, divisor, listed);
  }
}

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
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(params[i].is_privateuseone(), op, ": expected every parameter on a flagos device, got ",
                params[i].device(), " at index ", i);
    const at::Tensor max_exp_avg_sq = amsgrad ? max_exp_avg_sqs[i] : at::Tensor();
    check_same_device(op, {{"param", params[i]},
                           {"grad", grads[i]},
                           {"exp_avg", exp_avgs[i]},
                           {"exp_avg_sq", exp_avg_sqs[i]},
                           {"max_exp_avg_sq", amsgrad ? std::optional<at::Tensor>(max_exp_avg_sq) : std::nullopt},
                           {"state_step", state_steps[i]}});
    for (const at::Tensor& t : {grads[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sq}) {
      TORCH_CHECK(!t.defined() || (t.sizes() == params[i].sizes() && t.scalar_type() == params[i].scalar_type()), op,
                  ": each parameter's grad, exp_avg, exp_avg_sq and max_exp_avg_sq must have its shape ",
                  params[i].sizes(), " and dtype ", params[i].scalar_type(), ", got ", t.sizes(), " and ",
                  t.scalar_type());
    }
    TORCH_CHECK(state_steps[i].numel() == 1, op, ": each state_step must have one element, got ",
                state_steps[i].numel());
  }
  const double decay = decoupled_decay ? weight_decay : 0.0;
  // CANN's operator rejects negative values, which ATen would take.
  TORCH_CHECK(lr >= 0 && beta1 >= 0 && beta2 >= 0 && decay >= 0, op,
              ": CANN's fused AdamW operator takes lr, beta1, beta2 and weight_decay >= 0, got lr=", lr,
              ", beta1=", beta1, ", beta2=", beta2, ", weight_decay=", weight_decay);
  const bool scaled = grad_scale.has_value() && grad_scale->defined();
  const bool checks_inf = found_inf.has_value() && found_inf->defined();
  // An empty parameter has nothing to step.
  const hw::Plan plan = hw::plan_launches(params, [&](size_t i) { return params[i].numel() > 0; });
  for (const hw::Group& group : plan.groups) {
    const std::optional<at::Tensor> group_found_inf =
        checks_inf ? std::optional<at::Tensor>(on_device(*found_inf, group.device)) : std::nullopt;
    if (scaled) {
      unscale_gradients(group, grads, *grad_scale, group_found_inf);
    }
    std::vector<at::Tensor> group_grads;
    if (!decoupled_decay && weight_decay != 0) {
      // Adam's L2 decay on the unscaled gradient, in temporaries.
      for (size_t i : group.members) {
        group_grads.push_back(as_1d_if_0d((maximize ? grads[i].neg() : grads[i]).add(params[i], weight_decay)));
      }
    } else {
      group_grads = members_of(grads, group);
    }
    const bool negate = maximize && (decoupled_decay || weight_decay == 0);
    // float32 steps on the group's device (a CPU step is a number): what
    // torch.optim keeps for fused steps, and what CANN's operator casts to.
    std::vector<at::Tensor> steps;
    for (size_t i : group.members) {
      steps.push_back(as_1d_if_0d(on_device(state_steps[i], group.device).to(at::kFloat)));
    }
    const std::vector<at::Tensor> group_params = members_of(params, group);
    const std::vector<at::Tensor> group_maxs = amsgrad ? members_of(max_exp_avg_sqs, group) : std::vector<at::Tensor>();
    // flagos-lint: allow-launch-device(each (device, dtype) group launches on its own device)
    FLAGOS_GUARDED_LAUNCH(launch_device_of(group_params[0]), aclnnFusedAdamw, group_params, group_grads,
                          members_of(exp_avgs, group), members_of(exp_avg_sqs, group),
                          amsgrad ? std::optional<at::TensorList>(group_maxs) : std::nullopt, steps,
                          std::optional<at::Tensor>(), group_found_inf, lr, beta1, beta2, decay, eps, amsgrad, negate);
  }
}

// The .tensor_lr overloads (torch.optim with a tensor lr, as LR schedulers
// that capture it use): CANN's operator takes lr as a double, so it is read
// on the host (a synchronization when lr lives on a flagos device).
double lr_value(const char* op, const at::Tensor& lr) {
  TORCH_CHECK(lr.numel() == 1, op, ": lr must have one element, got ", lr.numel());
  return lr.item<double>();
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

// One schema, two steps: AdamW's decoupled decay or Adam's L2 decay. The
// wrapper's device is the first parameter's; each (device, dtype) group launches on its own.
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
