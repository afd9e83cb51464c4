// gather.out: gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self, out, index
at::Tensor & wrapper_gather_out(const at::Tensor & self, int64_t dim, const at::Tensor & index, bool sparse_grad, at::Tensor & out) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("gather.out", {{"self", self}, {"index", index}, {"out", out}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, out, index);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredOut<at::meta::structured_gather, 1> op(out);
  op.meta(self, dim, index, sparse_grad);
  op.check_written({{"self", self}, {"index", index}});
  flagos::impl::gather(launch_device, self, dim, index, sparse_grad, out);
  return out;
}
