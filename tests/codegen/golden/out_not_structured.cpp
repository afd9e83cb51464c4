// where.self_out: where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among self, out, condition, other
at::Tensor & wrapper_where_self_out(const at::Tensor & condition, const at::Tensor & self, const at::Tensor & other, at::Tensor & out) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("where.self_out", {{"condition", condition}, {"self", self}, {"other", other}, {"out", out}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self, out, condition, other);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::check_written(out, {{"condition", condition}, {"self", self}, {"other", other}});
  flagos::check::where(condition, self, other, out);
  if (flagos::gen::any_cpu_scalar(condition, self, other)) {
    // ACLNN reads device memory only: copy the CPU 0-dim operand to the launch device.
    return wrapper_where_self_out(flagos::gen::on_launch_device(condition, launch_device), flagos::gen::on_launch_device(self, launch_device), flagos::gen::on_launch_device(other, launch_device), out);
  }
  at::native::resize_output(out, flagos::gen::broadcast3_sizes(condition, self, other));
  if (flagos::gen::nothing_to_write(out)) return out;
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnSWhere, condition, self, other, out);
  return out;
}
