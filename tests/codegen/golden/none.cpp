// neg: neg(Tensor self) -> Tensor
// guard none: launches nothing
at::Tensor wrapper_neg(const at::Tensor & self) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("neg", {{"self", self}});
  const flagos::LaunchDevice launch_device = flagos::no_launch_device();
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredFunctional<at::meta::structured_neg, 1> op(launch_device);
  op.meta(self);
  at::Tensor& out = op.outputs[0];
  if (flagos::gen::nothing_to_write(out)) return std::move(out);
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnNeg, self, out);
  return std::move(out);
}
