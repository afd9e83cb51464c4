// max.dim: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
// guard first-tensor: the first flagos tensor among self
::std::tuple<at::Tensor,at::Tensor> wrapper_max_dim(const at::Tensor & self, int64_t dim, bool keepdim) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("max.dim", {{"self", self}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self);
  at::Tensor values = flagos::empty_on(launch_device, flagos::gen::reduced_sizes(self, dim, keepdim), self.scalar_type());
  at::Tensor indices = flagos::empty_on(launch_device, flagos::gen::reduced_sizes(self, dim, keepdim), at::kLong);
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnMaxDim, self, dim, keepdim, values, indices);
  return {values, indices};
}
