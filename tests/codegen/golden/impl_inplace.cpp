// div_.Tensor_mode: div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self, other
at::Tensor & wrapper_div__Tensor_mode(at::Tensor & self, const at::Tensor & other, ::std::optional<c10::string_view> rounding_mode) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("div_.Tensor_mode", {{"self", self}, {"other", other}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, other);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredInplace<at::meta::structured_div_Tensor_mode> op(self);
  op.meta(self, other, rounding_mode);
  op.check_written({{"other", other}});
  flagos::impl::div_Tensor_mode(launch_device, self, other, rounding_mode, self);
  return self;
}
