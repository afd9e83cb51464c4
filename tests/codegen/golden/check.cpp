// dot: dot(Tensor self, Tensor tensor) -> Tensor
// guard first-tensor: the first flagos tensor among self, tensor
at::Tensor wrapper_dot(const at::Tensor & self, const at::Tensor & tensor) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("dot", {{"self", self}, {"tensor", tensor}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, tensor);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::check::dot(self, tensor);
  if (flagos::gen::any_cpu_scalar(self, tensor)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_dot(flagos::gen::on_launch_device(self, launch_device), flagos::gen::on_launch_device(tensor, launch_device));
  }
  at::Tensor out = flagos::empty_on(launch_device, flagos::gen::matmul_sizes(self, tensor), self.scalar_type());
  if (flagos::gen::nothing_to_write(out)) return out;
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnDot, self, tensor, out);
  return out;
}
