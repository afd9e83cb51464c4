// The fused LSTM and GRU cells that ATen's RNNs (nn.LSTM, nn.GRU, LSTMCell,
// GRUCell) call on a PrivateUse1 device, as on CUDA: _thnn_fused_lstm_cell
// and _thnn_fused_gru_cell with their backwards. They have no CPU kernel, so
// without these even the CPU fallback failed. Each is composed of flagos ops
// (sigmoid, tanh, mul, add, cat, sum), which launch their ACLNN operators;
// the generated wrapper makes the device current once for all of them.
//
// The workspace that a forward saves for its backward is this file's own
// layout (nothing else reads it): the LSTM's four activated gates [i, f, g,
// o]; the GRU's [r, z, n, hx, the hidden gates' n part], as CUDA's kernels
// lay theirs out.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>

#include <optional>
#include <tuple>
#include <vector>

#include "generated/impls.h"
#include "runtime/launch.h"

namespace flagos {
namespace {

at::Tensor with_bias(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  return bias.has_value() && bias->defined() ? at::add(gates, *bias) : gates;
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

// ---- LSTM -----------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const LaunchDevice& device,
                                                               const at::Tensor& input_gates,
                                                               const at::Tensor& hidden_gates, const at::Tensor& cx,
                                                               const std::optional<at::Tensor>& input_bias,
                                                               const std::optional<at::Tensor>& hidden_bias) {
  TORCH_CHECK(input_gates.sizes() == hidden_gates.sizes() && input_gates.dim() == 2 &&
                  input_gates.size(1) == 4 * cx.size(-1),
              "_thnn_fused_lstm_cell: expected gates of shape [batch, 4 * hidden] matching cx, got ",
              input_gates.sizes(), ", ", hidden_gates.sizes(), " and cx ", cx.sizes());
  const at::Tensor gates = at::add(with_bias(input_gates, input_bias), with_bias(hidden_gates, hidden_bias));
  const std::vector<at::Tensor> parts = gates.chunk(4, 1);
  const at::Tensor i = parts[0].sigmoid();
  const at::Tensor f = parts[1].sigmoid();
  const at::Tensor g = parts[2].tanh();
  const at::Tensor o = parts[3].sigmoid();
  const at::Tensor cy = at::add(at::mul(f, cx), at::mul(i, g));
  const at::Tensor hy = at::mul(o, cy.tanh());
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(
    const LaunchDevice& device, const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  const bool has_hy = grad_hy.has_value() && grad_hy->defined();
  const bool has_cy = grad_cy.has_value() && grad_cy->defined();
  if (!has_hy && !has_cy) {
    return {at::Tensor(), at::Tensor(), at::Tensor()};  // as CUDA's kernel: no gradient flows
  }
  const std::vector<at::Tensor> gates = workspace.chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
  const at::Tensor tanh_cy = cy.tanh();
  // d(loss)/d(cy), through hy = o * tanh(cy) and directly.
  at::Tensor grad_c = has_cy ? *grad_cy : at::Tensor();
  at::Tensor grad_o;
  if (has_hy) {
    grad_o = at::mul(*grad_hy, tanh_cy);
    const at::Tensor through_hy = at::mul(at::mul(*grad_hy, o), at::rsub(at::mul(tanh_cy, tanh_cy), 1));
    grad_c = has_cy ? at::add(grad_c, through_hy) : through_hy;
  } else {
    grad_o = at::zeros_like(o);
  }
  // Through cy = f * cx + i * g, then each gate's activation.
  // The derivative of a sigmoid s is s (1 - s); of a tanh t, 1 - t^2.
  const at::Tensor grad_i = at::mul(at::mul(grad_c, g), at::mul(i, at::rsub(i, 1)));
  const at::Tensor grad_f = at::mul(at::mul(grad_c, cx), at::mul(f, at::rsub(f, 1)));
  const at::Tensor grad_g = at::mul(at::mul(grad_c, i), at::rsub(at::mul(g, g), 1));
  const at::Tensor grad_o_pre = at::mul(grad_o, at::mul(o, at::rsub(o, 1)));
  const at::Tensor grad_gates = at::cat({grad_i, grad_f, grad_g, grad_o_pre}, 1);
  const at::Tensor grad_cx = at::mul(grad_c, f);
  return {grad_gates, grad_cx, has_bias ? grad_gates.sum(0) : at::Tensor()};
}

// ---- GRU ------------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> fused_gru_cell(const LaunchDevice& device, const at::Tensor& input_gates,
                                                  const at::Tensor& hidden_gates, const at::Tensor& hx,
                                                  const std::optional<at::Tensor>& input_bias,
                                                  const std::optional<at::Tensor>& hidden_bias) {
  TORCH_CHECK(input_gates.sizes() == hidden_gates.sizes() && input_gates.dim() == 2 &&
                  input_gates.size(1) == 3 * hx.size(-1),
              "_thnn_fused_gru_cell: expected gates of shape [batch, 3 * hidden] matching hx, got ",
              input_gates.sizes(), ", ", hidden_gates.sizes(), " and hx ", hx.sizes());
  const std::vector<at::Tensor> in = with_bias(input_gates, input_bias).chunk(3, 1);
  const std::vector<at::Tensor> hid = with_bias(hidden_gates, hidden_bias).chunk(3, 1);
  const at::Tensor r = at::add(in[0], hid[0]).sigmoid();
  const at::Tensor z = at::add(in[1], hid[1]).sigmoid();
  const at::Tensor n = at::add(in[2], at::mul(r, hid[2])).tanh();
  const at::Tensor hy = at::add(n, at::mul(z, at::sub(hx, n)));
  return {hy, at::cat({r, z, n, hx, hid[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(
    const LaunchDevice& device, const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  const std::vector<at::Tensor> saved = workspace.chunk(5, 1);
  const at::Tensor &r = saved[0], &z = saved[1], &n = saved[2], &hx = saved[3], &hidden_n = saved[4];
  // hy = n + z * (hx - n)
  const at::Tensor grad_hx = at::mul(grad_hy, z);
  const at::Tensor grad_z = at::mul(at::mul(grad_hy, at::sub(hx, n)), at::mul(z, at::rsub(z, 1)));
  const at::Tensor grad_n = at::mul(at::mul(grad_hy, at::rsub(z, 1)), at::rsub(at::mul(n, n), 1));
  // n = tanh(input_n + r * hidden_n)
  const at::Tensor grad_r = at::mul(at::mul(grad_n, hidden_n), at::mul(r, at::rsub(r, 1)));
  const at::Tensor grad_input_gates = at::cat({grad_r, grad_z, grad_n}, 1);
  const at::Tensor grad_hidden_gates = at::cat({grad_r, grad_z, at::mul(grad_n, r)}, 1);
  if (!has_bias) {
    return {grad_input_gates, grad_hidden_gates, grad_hx, at::Tensor(), at::Tensor()};
  }
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_gates.sum(0), grad_hidden_gates.sum(0)};
}

}  // namespace flagos::impl
