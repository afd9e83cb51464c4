// scatter_.src: scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self, index, src
at::Tensor & wrapper_scatter__src(at::Tensor & self, int64_t dim, const at::Tensor & index, const at::Tensor & src) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("scatter_.src", {{"self", self}, {"index", index}, {"src", src}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, index, src);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredInplace<at::meta::structured_scatter_src> op(self);
  op.meta(self, dim, index, src);
  op.check_written({{"index", index}, {"src", src}});
  flagos::impl::scatter_src(launch_device, self, dim, index, src, self);
  return self;
}
