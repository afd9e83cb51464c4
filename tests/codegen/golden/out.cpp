// add.out: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self, out, other
at::Tensor & wrapper_add_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("add.out", {{"self", self}, {"other", other}, {"out", out}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, out, other);
  const flagos::LaunchGuard launch_guard(launch_device);
  if (flagos::gen::any_cpu_scalar(self)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_add_out(flagos::gen::on_launch_device(self, launch_device), other, alpha, out);
  }
  flagos::StructuredOut<at::meta::structured_add_Tensor, 1> op(out);
  op.meta(self, other, alpha);
  op.check_written({{"self", self}, {"other", other}});
  if (flagos::gen::nothing_to_write(out)) return out;
  if (flagos::is_cpu_scalar(other)) {
    // A Python number (`x + 0.5`) arrives as a CPU 0-dim tensor: launch with its value.
    FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAdds, self, flagos::gen::wrapped_value(other), alpha, out);
    return out;
  }
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAdd, self, other, alpha, out);
  return out;
}
