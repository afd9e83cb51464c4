// isin.Tensor_Tensor_out: isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
// guard first-tensor: the first flagos tensor among out, elements, test_elements
at::Tensor & wrapper_isin_Tensor_Tensor_out(const at::Tensor & elements, const at::Tensor & test_elements, bool assume_unique, bool invert, at::Tensor & out) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("isin.Tensor_Tensor_out", {{"elements", elements}, {"test_elements", test_elements}, {"out", out}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(out, elements, test_elements);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredOut<at::meta::structured_isin_Tensor_Tensor, 1> op(out);
  op.meta(elements, test_elements, assume_unique, invert);
  op.check_written({{"elements", elements}, {"test_elements", test_elements}});
  flagos::impl::isin_Tensor_Tensor(launch_device, elements, test_elements, assume_unique, invert, out);
  return out;
}
