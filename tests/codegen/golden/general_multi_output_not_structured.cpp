// native_layer_norm: native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
// guard explicit-arg: the device of `input`
::std::tuple<at::Tensor,at::Tensor,at::Tensor> wrapper_native_layer_norm(const at::Tensor & input, c10::SymIntArrayRef normalized_shape, const ::std::optional<at::Tensor> & weight, const ::std::optional<at::Tensor> & bias, double eps) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("native_layer_norm", {{"input", input}, {"weight", weight}, {"bias", bias}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(input);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::check::layer_norm(input, normalized_shape, weight, bias, eps);
  if (flagos::gen::any_cpu_scalar(input)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_native_layer_norm(flagos::gen::on_launch_device(input, launch_device), normalized_shape, weight, bias, eps);
  }
  at::Tensor out = flagos::empty_on(launch_device, input.sizes(), input.scalar_type());
  at::Tensor mean = flagos::empty_on(launch_device, flagos::gen::norm_stat_sizes(input, C10_AS_INTARRAYREF_SLOW(normalized_shape)), flagos::gen::norm_stat_type(input, weight));
  at::Tensor rstd = flagos::empty_on(launch_device, flagos::gen::norm_stat_sizes(input, C10_AS_INTARRAYREF_SLOW(normalized_shape)), flagos::gen::norm_stat_type(input, weight));
  if (flagos::gen::nothing_to_write(out, mean, rstd)) return {out, mean, rstd};
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnLayerNorm, input, C10_AS_INTARRAYREF_SLOW(normalized_shape), weight, bias, eps, out, mean, rstd);
  return {out, mean, rstd};
}
