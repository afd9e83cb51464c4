// relu_: relu_(Tensor(a!) self) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self
at::Tensor & wrapper_relu_(at::Tensor & self) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("relu_", {{"self", self}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::check_written(self, {});
  flagos::check::relu(self);
  if (flagos::gen::nothing_to_write(self)) return self;
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnInplaceRelu, self);
  return self;
}
