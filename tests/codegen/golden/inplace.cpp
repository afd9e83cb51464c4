// mul_.Tensor: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self, other
at::Tensor & wrapper_mul__Tensor(at::Tensor & self, const at::Tensor & other) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("mul_.Tensor", {{"self", self}, {"other", other}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, other);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredInplace<at::meta::structured_mul_Tensor> op(self);
  op.meta(self, other);
  op.check_written({{"other", other}});
  if (flagos::gen::nothing_to_write(self)) return self;
  if (flagos::is_cpu_scalar(other)) {
    // A Python number (`x + 0.5`) arrives as a CPU 0-dim tensor: launch with its value.
    FLAGOS_GUARDED_LAUNCH(launch_device, aclnnInplaceMuls, self, flagos::gen::wrapped_value(other));
    return self;
  }
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnInplaceMul, self, other);
  return self;
}
