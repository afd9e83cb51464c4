// isin.Tensor_Tensor: isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor
// guard first-tensor: the first flagos tensor among elements, test_elements
at::Tensor wrapper_isin_Tensor_Tensor(const at::Tensor & elements, const at::Tensor & test_elements, bool assume_unique, bool invert) {
  const flagos::phases::KernelSpan kernel_span;
  flagos::check_same_device("isin.Tensor_Tensor", {{"elements", elements}, {"test_elements", test_elements}});
  const flagos::LaunchDevice launch_device = flagos::launch_device_of(elements, test_elements);
  const flagos::LaunchGuard launch_guard(launch_device);
  flagos::StructuredFunctional<at::meta::structured_isin_Tensor_Tensor, 1> op(launch_device);
  op.meta(elements, test_elements, assume_unique, invert);
  flagos::impl::isin_Tensor_Tensor(launch_device, elements, test_elements, assume_unique, invert, op.outputs[0]);
  return std::move(op.outputs[0]);
}
