// gather: gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
// guard first-tensor: the first flagos tensor among self, index
at::Tensor wrapper_gather(const at::Tensor & self, int64_t dim, const at::Tensor & index, bool sparse_grad) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("gather", {{"self", self}, {"index", index}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, index);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredFunctional<at::meta::structured_gather, 1> op(launch_device);
  op.meta(self, dim, index, sparse_grad);
  flagos::impl::gather(launch_device, self, dim, index, sparse_grad, op.outputs[0]);
  return std::move(op.outputs[0]);
}
