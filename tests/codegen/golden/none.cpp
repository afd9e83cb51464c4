// neg: neg(Tensor self) -> Tensor
// guard none: launches nothing
at::Tensor wrapper_neg(const at::Tensor & self) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("neg", {{"self", self}});
  const flagos::LaunchDevice launch_device = flagos::no_launch_device();
  at::Tensor out = flagos::empty_on(launch_device, self.sizes(), self.scalar_type());
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnNeg, self, out);
  return out;
}
