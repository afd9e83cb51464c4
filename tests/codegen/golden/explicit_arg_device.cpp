// full: full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
// guard explicit-arg: the `device` argument (the current flagos device when absent)
at::Tensor wrapper_full(c10::SymIntArrayRef size, const at::Scalar & fill_value, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "full: flagos supports only strided tensors");
  const flagos::phases::KernelSpan kernel_span;
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(device);
  const flagos::LaunchGuard launch_guard(launch_device);
  at::Tensor out = flagos::empty_on(launch_device, C10_AS_INTARRAYREF_SLOW(size), dtype.value_or(flagos::gen::full_type(fill_value)));
  if (flagos::gen::nothing_to_write(out)) return out;
  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnInplaceFillScalar, out, fill_value);
  return out;
}
