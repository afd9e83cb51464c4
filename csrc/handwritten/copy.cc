// Copies into, out of and between flagos devices (_copy_from and
// _copy_from_and_resize, which copy_ and .to() reach).
//
// The generated wrappers make the destination's device current (the
// registry's explicit-arg `dst`) and pass it as the launch device; a
// cross-device copy moves the bytes with a peer copy queued on the
// destination device's current stream, and packs a strided source on the
// source's own device first (the lint's allow-launch-device exemptions).
// The caller's current device is left as it was.
//
// Ordering (docs/streams.md): streams are asynchronous, so every copy is
// ordered against the work queued on the streams of its devices:
// - to the CPU (and .item(), in tensor_basics.cc): the host waits for the
//   source device's current stream, then reads (StreamWait::kHostRead); a
//   non-blocking copy into pinned memory is queued on that stream instead and
//   the pinned block records the stream (kPinnedReuse);
// - from the CPU: the host waits for the destination's stream before writing
//   device memory at once (kHostWrite); a non-blocking copy from pinned
//   memory is queued on that stream;
// - between devices: the destination's stream waits for the source's
//   (kPeerSource), the copy is queued there, and the source's stream waits
//   for the copy before going on (kPeerRelease), with events, never a host
//   synchronization.
//
// Conjugate and negative views: ATen's copy_ hands a source with the conj
// (or neg) bit to _copy_from, which therefore passes through the Conjugate
// and Negative keys (the registry's `fallthrough:`; their fallback would
// resolve the bit by copying, i.e. by calling _copy_from again, forever).
// The copy moves the physical values, then conjugates (or negates) the
// destination.
#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/view_as_real.h>

#include <array>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "aten/fallback.h"
#include "generated/impls.h"
#include "runtime/acl_check.h"
#include "runtime/host_allocator.h"
#include "runtime/launch.h"
#include "runtime/stream.h"
#include "flagos/aclnn/aclnnInplaceCopy.h"

namespace flagos {
namespace {

void* data_of(const at::Tensor& t) {
  return static_cast<char*>(const_cast<void*>(t.storage().data())) +
         t.storage_offset() * static_cast<int64_t>(t.itemsize());
}

// aclnnInplaceCopy takes no unsigned type wider than a byte, no ComplexHalf
// and, on the 910B, no 8-bit float (CANN's operators take those on Ascend
// 950 only). A copy into such a dtype from the same dtype is bit for bit the
// copy into the signed integer type of its width, and so is one into an
// unsigned type from an integral source (integer conversion wraps alike),
// so the launch sees that view instead. (Converting to or from an 8-bit
// float still needs the operator: the CPU converts, aten::_copy_from below.)
std::optional<at::ScalarType> bit_twin(at::ScalarType dtype) {
  switch (dtype) {
    case at::kUInt16: return at::kShort;
    case at::kUInt32: return at::kInt;
    case at::kUInt64: return at::kLong;
    case at::kComplexHalf: return at::kInt;
    case at::kFloat8_e5m2:
    case at::kFloat8_e4m3fn: return at::kChar;
    default: return std::nullopt;
  }
}

bool is_wide_unsigned(at::ScalarType dtype) {
  return dtype == at::kUInt16 || dtype == at::kUInt32 || dtype == at::kUInt64;
}

// CANN's operators take at most 8 dims. A copy of more is the same copy
// over fewer dims wherever both tensors step through memory evenly across
// adjacent dims (size-1 dims dropped, such neighbours merged): views of
// dst and src (broadcast to dst's shape) with those dims, or nullopt when
// more than 8 remain.
std::optional<std::pair<at::Tensor, at::Tensor>> collapse_copy(const at::Tensor& dst, const at::Tensor& src) {
  constexpr size_t kMaxDims = 8;
  const at::Tensor from = src.expand(dst.sizes());
  std::vector<int64_t> sizes, dst_strides, src_strides;
  for (int64_t d = 0; d < dst.dim(); ++d) {
    const int64_t size = dst.size(d);
    if (size == 1) continue;
    if (!sizes.empty() && dst_strides.back() == dst.stride(d) * size &&
        src_strides.back() == from.stride(d) * size) {
      sizes.back() *= size;
      dst_strides.back() = dst.stride(d);
      src_strides.back() = from.stride(d);
      continue;
    }
    sizes.push_back(size);
    dst_strides.push_back(dst.stride(d));
    src_strides.push_back(from.stride(d));
  }
  if (sizes.size() > kMaxDims) return std::nullopt;
  return std::make_pair(dst.as_strided(sizes, dst_strides, dst.storage_offset()),
                        from.as_strided(sizes, src_strides, from.storage_offset()));
}

// Launches aclnnInplaceCopy(dst, src) on `device`, through bit_twin views
// where they are exact.
void launch_copy(const LaunchDevice& device, const at::Tensor& dst, const at::Tensor& src) {
  if (dst.dim() > 8 || src.dim() > 8) {
    if (auto views = collapse_copy(dst, src)) {
      launch_copy(device, views->first, views->second);
      return;
    }
  }
  const std::optional<at::ScalarType> dst_twin = bit_twin(dst.scalar_type());
  if (dst_twin.has_value() && (src.scalar_type() == dst.scalar_type() ||
                               (is_wide_unsigned(dst.scalar_type()) &&
                                at::isIntegralType(src.scalar_type(), /*includeBool=*/true) &&
                                !bit_twin(src.scalar_type())))) {
    const at::Tensor from = src.scalar_type() == dst.scalar_type() ? src.view(*dst_twin) : src;
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceCopy, dst.view(*dst_twin), from);
    return;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceCopy, dst, src);
}

// A contiguous tensor on `device` with the values (and dtype `dtype`) of
// `src`, which lives on that device too: `src` itself when it already is.
at::Tensor contiguous_on_device(const at::Tensor& src, at::ScalarType dtype) {
  if (src.is_contiguous() && src.scalar_type() == dtype) {
    return src;
  }
  // flagos-lint: allow-launch-device(packs a copy's source on the source's own device before the transfer)
  const LaunchDevice device = launch_device_of(src);
  const LaunchGuard device_current(device);  // before any allocation
  at::Tensor out = empty_on(device, src.sizes(), dtype);
  launch_copy(device, out, src);  // packs a copy's source on the source's own device before the transfer
  return out;
}

// Lets `device` copy from `peer`. The runtime enables peer access from the
// current device, so this switches to `device` for the call: once per pair,
// at the first copy between them.
void enable_peer_access(c10::DeviceIndex device, c10::DeviceIndex peer) {
  static std::array<std::atomic<uint32_t>, kMaxDevices> enabled{};
  const uint32_t bit = 1u << peer;
  if ((enabled[device].load(std::memory_order_acquire) & bit) != 0) {
    return;
  }
  int32_t can_access = 0;
  FLAGOS_ACL_CHECK(aclrtDeviceCanAccessPeer(&can_access, device, peer));
  TORCH_CHECK(can_access != 0, "flagos: flagos:", static_cast<int>(device),
              " cannot access flagos:", static_cast<int>(peer), " for a device-to-device copy");
  const c10::DeviceIndex previous = exchange_device(device);
  const aclError status = aclrtDeviceEnablePeerAccess(peer, 0);
  set_device(previous);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: enabling peer access from flagos:",
              static_cast<int>(device), " to flagos:", static_cast<int>(peer),
              " failed with ACL error ", status, ": ", recent_error_message());
  enabled[device].fetch_or(bit, std::memory_order_release);
}

// A non-blocking copy between `host` (pinned, contiguous) and the contiguous
// device tensor `device_tensor` of the same dtype and size, queued on the
// device's current stream; the pinned block records the stream, so that it
// is not reused before the copy has run.
void copy_pinned_async(const at::Tensor& host, const at::Tensor& device_tensor, bool to_device) {
  const c10::DeviceIndex device = device_tensor.device().index();
  const c10::Stream stream = current_stream(device);
  {
    // flagos-lint: allow-launch-device(the transfer runs on the device tensor's device: the source of a read)
    const LaunchGuard guard(launch_device_of(device_tensor));
    if (to_device) {
      FLAGOS_ACL_CHECK(aclrtMemcpyAsync(data_of(device_tensor), device_tensor.nbytes(), data_of(host), host.nbytes(),
                                        ACL_MEMCPY_HOST_TO_DEVICE, acl_stream(stream)));
    } else {
      FLAGOS_ACL_CHECK(aclrtMemcpyAsync(data_of(host), host.nbytes(), data_of(device_tensor), device_tensor.nbytes(),
                                        ACL_MEMCPY_DEVICE_TO_HOST, acl_stream(stream)));
    }
  }
  record_pinned_use(data_of(host), stream);
}

// Whether a copy between `host` and a device tensor of `sizes` and `dtype`
// can be one queued transfer: pinned, contiguous, same dtype and shape.
bool pinned_transfer(const at::Tensor& host, const at::Tensor& device_tensor) {
  return host.is_contiguous() && device_tensor.is_contiguous() && host.scalar_type() == device_tensor.scalar_type() &&
         host.sizes() == device_tensor.sizes() && is_pinned(data_of(host));
}

void copy_host_to_device(const LaunchDevice& device, const at::Tensor& src, const at::Tensor& dst,
                         bool non_blocking) {
  if (non_blocking && pinned_transfer(src, dst)) {
    copy_pinned_async(src, dst, /*to_device=*/true);
    return;
  }
  const at::Tensor host = src.to(dst.scalar_type()).expand_as(dst).contiguous();
  const at::Tensor staging = dst.is_contiguous() ? dst : empty_on(device, dst.sizes(), dst.scalar_type());
  {
    const LaunchGuard guard(device);
    // aclrtMemcpy writes at once: work queued on the destination (or on a
    // pooled staging block) must have run first.
    if (stream_wait_enabled(StreamWait::kHostWrite)) {
      synchronize_stream(current_stream(device.index));
    }
    FLAGOS_ACL_CHECK(aclrtMemcpy(data_of(staging), staging.nbytes(), host.const_data_ptr(),
                                 host.nbytes(), ACL_MEMCPY_HOST_TO_DEVICE));
  }
  if (!staging.is_same(dst)) {
    launch_copy(device, dst, staging);
  }
}

void copy_device_to_host(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  const at::Tensor packed = contiguous_on_device(src, src.scalar_type());
  if (non_blocking && pinned_transfer(dst, packed)) {
    copy_pinned_async(dst, packed, /*to_device=*/false);
    return;
  }
  at::Tensor host = at::empty(packed.sizes(), packed.options().device(at::kCPU));
  {
    // flagos-lint: allow-launch-device(the host reads the source on the source's device)
    const LaunchGuard guard(launch_device_of(packed));
    // aclrtMemcpy reads at once: the kernels that produce the source must have run.
    if (stream_wait_enabled(StreamWait::kHostRead)) {
      synchronize_stream(current_stream(packed.device().index()));
    }
    FLAGOS_ACL_CHECK(aclrtMemcpy(host.mutable_data_ptr(), host.nbytes(), data_of(packed),
                                 packed.nbytes(), ACL_MEMCPY_DEVICE_TO_HOST));
  }
  dst.copy_(host);
}

void copy_between_devices(const LaunchDevice& device, const at::Tensor& src, const at::Tensor& dst) {
  const c10::DeviceIndex src_device = src.device().index();
  const at::Tensor packed = contiguous_on_device(src, src.scalar_type());
  const bool direct = dst.is_contiguous() && dst.scalar_type() == src.scalar_type() &&
                      dst.sizes() == src.sizes();
  const at::Tensor staging = direct ? dst : empty_on(device, packed.sizes(), packed.scalar_type());
  enable_peer_access(device.index, src_device);
  const c10::Stream source_stream = current_stream(src_device);
  const c10::Stream copy_stream = current_stream(device.index);
  // The source's producers run before the copy reads it.
  if (stream_wait_enabled(StreamWait::kPeerSource)) {
    wait_stream(copy_stream, source_stream);
  }
  {
    const LaunchGuard guard(device);
    FLAGOS_ACL_CHECK(aclrtMemcpyAsync(data_of(staging), staging.nbytes(), data_of(packed), packed.nbytes(),
                                      ACL_MEMCPY_DEVICE_TO_DEVICE, acl_stream(copy_stream)));
  }
  // Nothing queued later on the source's stream (a write to the source, a
  // new tensor in a freed source block) runs before the copy has read it.
  if (stream_wait_enabled(StreamWait::kPeerRelease)) {
    wait_stream(source_stream, copy_stream);
  }
  if (!direct) {
    launch_copy(device, dst, staging);
  }
}

// The physical values of a tensor with the conj or neg bit: the same
// memory, the bit dropped (a view).
at::Tensor physical(const at::Tensor& t) {
  at::Tensor out = t.is_conj() ? t.conj() : t;
  return out.is_neg() ? at::_neg_view(out) : out;
}

// dst = conj(dst) and/or -dst, in place, on dst's device. Complex values
// change through their real view (ACLNN's Neg takes no complex dtype).
void apply_bits(const at::Tensor& dst, bool conj, bool neg) {
  if (!dst.is_complex()) {
    if (neg) dst.neg_();
    return;
  }
  const at::Tensor parts = at::view_as_real(dst);
  if (neg) parts.select(-1, 0).neg_();
  if (conj != neg) parts.select(-1, 1).neg_();
}

at::Tensor copy_values(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& dst, bool non_blocking);

at::Tensor copy_physical(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& dst,
                         bool non_blocking) {
  if (dst.is_conj() || dst.is_neg()) {
    // A conjugate / negative view holds conj(v) / -v in memory for the value
    // v: copy the values into its memory, then apply its bits there.
    const at::Tensor target = physical(dst);
    copy_values(device, self, target, non_blocking);
    apply_bits(target, dst.is_conj(), dst.is_neg());
    return dst;
  }
  copy_values(device, physical(self), dst, non_blocking);
  apply_bits(dst, self.is_conj(), self.is_neg());
  return dst;
}

// The copy into `dst`, whose device is `device`.
at::Tensor copy_values(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  check_not_forked();
  if (dst.numel() == 0) {
    return dst;
  }
  if (self.is_conj() || self.is_neg() || dst.is_conj() || dst.is_neg()) {
    return copy_physical(device, self, dst, non_blocking);
  }
  if (self.is_privateuseone() && dst.is_privateuseone()) {
    if (self.device() == dst.device()) {
      try {
        launch_copy(device, dst, self);
      } catch (const DtypeUnsupported& error) {
        // A conversion aclnnInplaceCopy does not take (float32 -> ComplexHalf):
        // convert on the CPU; both transfers are same-dtype copies.
        note_dtype_fallback("aten::_copy_from", &error);
        copy_host_to_device(device, self.to(at::kCPU), dst, /*non_blocking=*/false);
      }
    } else {
      copy_between_devices(device, self, dst);
    }
  } else if (dst.is_privateuseone()) {
    TORCH_CHECK(self.is_cpu(), "flagos: cannot copy from ", self.device(), " to ", dst.device());
    copy_host_to_device(device, self, dst, non_blocking);
  } else {
    TORCH_CHECK(dst.is_cpu(), "flagos: cannot copy from ", self.device(), " to ", dst.device());
    copy_device_to_host(self, dst, non_blocking);
  }
  return dst;
}

// copy_ hands a flagos tensor to _copy_from before it makes its own checks
// (PrivateUse1 is not one of the devices copy_ runs itself): make them here
// with the TensorIterator that copy_ builds for the CPU and CUDA, which
// refuses a destination that overlaps itself (an expanded tensor) or
// partially overlaps the source (x[1:4] = x[0:3]) and a source that does
// not broadcast to it. A source that is the destination's exact view is a
// no-op, as there.
}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor copy_from(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  const bool same_data = dst.is_alias_of(self) && dst.storage_offset() == self.storage_offset() &&
                         dst.strides().equals(self.strides()) && dst.sizes().equals(self.sizes()) &&
                         dst.scalar_type() == self.scalar_type() && dst.is_conj() == self.is_conj() &&
                         dst.is_neg() == self.is_neg();
  if (same_data) {
    return dst;
  }
  at::TensorIteratorConfig()
      .add_output(dst)
      .add_const_input(self)
      .resize_outputs(false)
      .check_all_same_dtype(false)
      .check_all_same_device(false)
      .build();
  return copy_values(device, self, dst, non_blocking);
}

at::Tensor copy_from_and_resize(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& dst) {
  at::native::resize_output(dst, self.sizes());
  return copy_values(device, self, dst, /*non_blocking=*/false);
}

// conj_physical into `out`: the values, then the imaginary parts negated.
at::Tensor& conj_physical(const LaunchDevice& device, const at::Tensor& self, at::Tensor& out) {
  // The CPU's checks (TensorIterator's unary op: dtype, overlap), and `out` resized.
  at::TensorIterator::unary_op(out, self);
  copy_values(device, physical(self), out, /*non_blocking=*/false);
  apply_bits(out, !self.is_conj(), self.is_neg());
  return out;
}

}  // namespace flagos::impl
