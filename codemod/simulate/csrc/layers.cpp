// Layers the fallback cannot serve. Torch routes convolutions to ops with
// no CPU kernel for PrivateUse1 (computed by the CPU convolution on host
// aliases), batch norm mutates unannounced, and LSTM/GRU call fused cells
// that only CUDA implements (written here with ATen ops on device tensors,
// which run through the fallback; only these kernels read the workspaces).
#include "sim.h"

#include <ATen/ATen.h>
#include <torch/library.h>

namespace tpsim {
namespace {

at::Tensor to_device(const at::Tensor& host, const at::Tensor& like) {
  return host.defined() ? host.to(like.device()) : host;
}

at::Tensor convolution(
    const at::Tensor& input,
    const at::Tensor& weight,
    const std::optional<at::Tensor>& bias,
    c10::IntArrayRef stride,
    c10::IntArrayRef padding,
    c10::IntArrayRef dilation,
    bool transposed,
    c10::IntArrayRef output_padding,
    int64_t groups) {
  KernelScope kernel;
  HostAccess access;
  std::optional<at::Tensor> host_bias;
  if (bias && bias->defined()) {
    check_devices({&input, &weight, &*bias});
    host_bias = access.read(*bias);
  } else {
    check_devices({&input, &weight});
  }
  auto out = at::convolution(
      access.read(input),
      access.read(weight),
      host_bias,
      stride,
      padding,
      dilation,
      transposed,
      output_padding,
      groups);
  return to_device(out, input);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output,
    const at::Tensor& input,
    const at::Tensor& weight,
    c10::IntArrayRef stride,
    c10::IntArrayRef padding,
    c10::IntArrayRef dilation,
    bool transposed,
    c10::IntArrayRef output_padding,
    int64_t groups,
    std::array<bool, 3> output_mask) {
  check_devices({&grad_output, &input, &weight});
  std::vector<int64_t> bias_sizes{
      transposed ? weight.size(1) * groups : weight.size(0)};
  KernelScope kernel;
  HostAccess access;
  auto [gi, gw, gb] = at::convolution_backward(
      access.read(grad_output),
      access.read(input),
      access.read(weight),
      bias_sizes,
      stride,
      padding,
      dilation,
      transposed,
      output_padding,
      groups,
      output_mask);
  return {to_device(gi, input), to_device(gw, input), to_device(gb, input)};
}

std::optional<at::Tensor> host_opt(
    HostAccess& access, const std::optional<at::Tensor>& t, bool write) {
  if (!t || !t->defined()) {
    return std::nullopt;
  }
  return write ? access.write(*t) : access.read(*t);
}

// Batch norm updates its running stats in place although its schema does
// not say so, so the fallback would lose the update: write through aliases.
std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm(
    const at::Tensor& input,
    const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var,
    bool training,
    double momentum,
    double eps) {
  for (const auto* t : {&weight, &bias, &running_mean, &running_var}) {
    if (*t && (*t)->defined()) {
      check_devices({&input, &**t});
    }
  }
  KernelScope kernel;
  HostAccess access;
  auto [out, mean, invstd] = at::native_batch_norm(
      access.read(input),
      host_opt(access, weight, false),
      host_opt(access, bias, false),
      host_opt(access, running_mean, training),
      host_opt(access, running_var, training),
      training,
      momentum,
      eps);
  return {
      to_device(out, input), to_device(mean, input), to_device(invstd, input)};
}

at::Tensor with_bias(
    const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  return bias && bias->defined() ? gates + *bias : gates;
}

at::Tensor or_zeros(
    const std::optional<at::Tensor>& t, const at::Tensor& like) {
  return t && t->defined() ? *t : at::zeros_like(like);
}

// workspace = [i, f, g, o], the activated gates.
std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(
    const at::Tensor& input_gates,
    const at::Tensor& hidden_gates,
    const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias) {
  auto gates =
      with_bias(with_bias(input_gates + hidden_gates, input_bias), hidden_bias);
  auto chunks = gates.chunk(4, 1);
  auto i = chunks[0].sigmoid();
  auto f = chunks[1].sigmoid();
  auto g = chunks[2].tanh();
  auto o = chunks[3].sigmoid();
  auto cy = f * cx + i * g;
  auto hy = o * cy.tanh();
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy,
    const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx,
    const at::Tensor& cy,
    const at::Tensor& workspace,
    bool has_bias) {
  auto chunks = workspace.chunk(4, 1);
  const auto &i = chunks[0], &f = chunks[1], &g = chunks[2], &o = chunks[3];
  auto tanh_cy = cy.tanh();
  auto ghy = or_zeros(grad_hy, cy);
  auto gc = or_zeros(grad_cy, cy) + ghy * o * (1 - tanh_cy * tanh_cy);
  auto gi = gc * g * i * (1 - i);
  auto gf = gc * cx * f * (1 - f);
  auto gg = gc * i * (1 - g * g);
  auto go = ghy * tanh_cy * o * (1 - o);
  auto grad_gates = at::cat({gi, gf, gg, go}, 1);
  auto grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, gc * f, grad_bias};
}

// workspace = [r, z, n, hx, hidden n-gate], what the gradient needs.
std::tuple<at::Tensor, at::Tensor> gru_cell(
    const at::Tensor& input_gates,
    const at::Tensor& hidden_gates,
    const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias,
    const std::optional<at::Tensor>& hidden_bias) {
  auto in = with_bias(input_gates, input_bias).chunk(3, 1);
  auto hid = with_bias(hidden_gates, hidden_bias).chunk(3, 1);
  auto r = (in[0] + hid[0]).sigmoid();
  auto z = (in[1] + hid[1]).sigmoid();
  auto n = (in[2] + r * hid[2]).tanh();
  auto hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hx, hid[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>
gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  auto chunks = workspace.chunk(5, 1);
  const auto &r = chunks[0], &z = chunks[1], &n = chunks[2];
  const auto &hx = chunks[3], &hn = chunks[4];
  auto gz = grad_hy * (hx - n) * z * (1 - z);
  auto gn = grad_hy * (1 - z) * (1 - n * n);
  auto gr = gn * hn * r * (1 - r);
  auto grad_input = at::cat({gr, gz, gn}, 1);
  auto grad_hidden = at::cat({gr, gz, gn * r}, 1);
  at::Tensor bias_input, bias_hidden;
  if (has_bias) {
    bias_input = grad_input.sum(0);
    bias_hidden = grad_hidden.sum(0);
  }
  return {grad_input, grad_hidden, grad_hy * z, bias_input, bias_hidden};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", &convolution);
  m.impl("convolution_backward_overrideable", &convolution_backward);
  m.impl("native_batch_norm", &batch_norm);
  m.impl("_thnn_fused_lstm_cell", &lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", &lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", &gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", &gru_cell_backward);
}

} // namespace
} // namespace tpsim
