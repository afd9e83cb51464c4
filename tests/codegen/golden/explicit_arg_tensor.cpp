// addmm: addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
// guard explicit-arg: the device of `mat1`
at::Tensor wrapper_addmm(const at::Tensor & self, const at::Tensor & mat1, const at::Tensor & mat2, const at::Scalar & beta, const at::Scalar & alpha) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("addmm", {{"self", self}, {"mat1", mat1}, {"mat2", mat2}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(mat1);
  const flagos::LaunchGuard launch_guard(launch_device);
  if (flagos::gen::any_cpu_scalar(self, mat1, mat2)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_addmm(flagos::gen::on_launch_device(self, launch_device), flagos::gen::on_launch_device(mat1, launch_device), flagos::gen::on_launch_device(mat2, launch_device), beta, alpha);
  }
  flagos::StructuredFunctional<at::meta::structured_addmm, 1> op(launch_device);
  op.meta(self, mat1, mat2, beta, alpha);
  at::Tensor& out = op.outputs[0];
  if (flagos::gen::nothing_to_write(out)) return std::move(out);
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAddmm, self, mat1, mat2, beta, alpha, out, int8_t{0});
  return std::move(out);
}
