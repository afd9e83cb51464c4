// add.Tensor: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
// guard first-tensor: the first flagos tensor among self, other
at::Tensor wrapper_add_Tensor(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("add.Tensor", {{"self", self}, {"other", other}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, other);
  const flagos::LaunchGuard launch_guard(launch_device);
  if (flagos::gen::any_cpu_scalar(self)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_add_Tensor(flagos::gen::on_launch_device(self, launch_device), other, alpha);
  }
  flagos::StructuredFunctional<at::meta::structured_add_Tensor, 1> op(launch_device);
  op.meta(self, other, alpha);
  at::Tensor& out = op.outputs[0];
  if (flagos::gen::nothing_to_write(out)) return std::move(out);
  if (flagos::is_cpu_scalar(other)) {
    // A Python number (`x + 0.5`) arrives as a CPU 0-dim tensor: launch with its value.
    FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAdds, self, flagos::gen::wrapped_value(other), alpha, out);
    return std::move(out);
  }
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAdd, self, other, alpha, out);
  return std::move(out);
}
