// Autocast for the device, with the op lists CUDA uses: matmuls and
// convolutions run in the lower precision, reductions and losses in fp32,
// mixed inputs are promoted; everything else falls through.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace tpsim {
namespace {

// The op-list macros spell ATen types unqualified.
using namespace at;

at::Tensor binary_cross_entropy_banned(
    const at::Tensor&,
    const at::Tensor&,
    const std::optional<at::Tensor>&,
    int64_t) {
  // CUDA's message: the op is unsafe under autocast on every accelerator.
  TORCH_CHECK(
      false,
      "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are "
      "unsafe to autocast.\n"
      "Many models use a sigmoid layer right before the binary cross entropy "
      "layer.\n"
      "In this case, combine the two layers using "
      "torch.nn.functional.binary_cross_entropy_with_logits\n"
      "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
      "BCEWithLogits are\n"
      "safe to autocast.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TPSIM_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TPSIM_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TPSIM_FP32_OPT(...)                                                    \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define TPSIM_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TPSIM_LOWER)
  AT_FORALL_FP32(TPSIM_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TPSIM_FP32_OPT)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(
      KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(TPSIM_PROMOTE)
  m.impl(
      TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
      TORCH_FN(binary_cross_entropy_banned));
#undef TPSIM_LOWER
#undef TPSIM_FP32
#undef TPSIM_FP32_OPT
#undef TPSIM_PROMOTE
}

} // namespace
} // namespace tpsim
