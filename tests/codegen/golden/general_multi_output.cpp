// max.dim: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
// guard first-tensor: the first flagos tensor among self
::std::tuple<at::Tensor,at::Tensor> wrapper_max_dim(const at::Tensor & self, int64_t dim, bool keepdim) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("max.dim", {{"self", self}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredFunctional<at::meta::structured_max_dim, 2> op(launch_device);
  op.meta(self, dim, keepdim);
  at::Tensor& values = op.outputs[0];
  at::Tensor& indices = op.outputs[1];
  if (flagos::gen::nothing_to_write(values, indices)) return {std::move(values), std::move(indices)};
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnMaxDim, self, dim, keepdim, values, indices);
  return {std::move(values), std::move(indices)};
}
