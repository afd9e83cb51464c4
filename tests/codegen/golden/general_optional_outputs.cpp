// native_layer_norm_backward: native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
// guard explicit-arg: the device of `input`
::std::tuple<at::Tensor,at::Tensor,at::Tensor> wrapper_native_layer_norm_backward(const at::Tensor & grad_out, const at::Tensor & input, c10::SymIntArrayRef normalized_shape, const at::Tensor & mean, const at::Tensor & rstd, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, ::std::array<bool,3> output_mask) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("native_layer_norm_backward", {{"grad_out", grad_out}, {"input", input}, {"mean", mean}, {"rstd", rstd}, {"weight", weight}, {"bias", bias}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(input);
  const flagos::LaunchGuard launch_guard(launch_device);
  if (flagos::gen::any_cpu_scalar(grad_out, input, mean, rstd)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_native_layer_norm_backward(flagos::gen::on_launch_device(grad_out, launch_device), flagos::gen::on_launch_device(input, launch_device), normalized_shape, flagos::gen::on_launch_device(mean, launch_device), flagos::gen::on_launch_device(rstd, launch_device), weight, bias, output_mask);
  }
  at::Tensor grad_input = (output_mask[0]) ? flagos::empty_on(launch_device, input.sizes(), input.scalar_type()) : at::Tensor();
  at::Tensor grad_weight = (output_mask[1]) ? flagos::empty_on(launch_device, C10_AS_INTARRAYREF_SLOW(normalized_shape), weight.value_or(input).scalar_type()) : at::Tensor();
  at::Tensor grad_bias = (output_mask[2]) ? flagos::empty_on(launch_device, C10_AS_INTARRAYREF_SLOW(normalized_shape), bias.value_or(input).scalar_type()) : at::Tensor();
  if (flagos::gen::nothing_to_write(grad_input, grad_weight, grad_bias)) return {grad_input, grad_weight, grad_bias};
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnLayerNormBackward, grad_out, input, C10_AS_INTARRAYREF_SLOW(normalized_shape), mean, rstd, weight, bias, output_mask, grad_input, grad_weight, grad_bias);
  return {grad_input, grad_weight, grad_bias};
}
