// Operators. A handful are real device kernels (allocation, copies, views,
// resizing, scalars, dropout, record_stream); everything else goes through a
// boxed fallback that checks devices the way CUDA kernels do, hands RNG ops
// the device generator, and then runs the CPU kernel on host copies
// (at::native::cpu_fallback), moving the results back to the device.
#include "sim.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <unordered_set>

namespace tpsim {
namespace {

const c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

thread_local int kernel_depth = 0;

// A blocking transfer between host and device, or .item(), returns once the
// device's current stream has done it (CUDA synchronizes that stream), so
// the host, and every stream after, is ordered after that stream's work.
void host_waited(const at::Tensor& device_side) {
  if (kernel_depth == 0) {
    auto index = device_side.device().index();
    host_waits_stream(c10::Stream(
        c10::Stream::UNSAFE,
        c10::Device(kDevice, index),
        current_stream_id(index)));
  }
}

c10::DeviceIndex index_of(std::optional<c10::Device> device) {
  auto index =
      device && device->has_index() ? device->index() : current_device();
  check_index(index);
  return index;
}

void check_factory(
    std::optional<c10::Layout> layout, std::optional<bool> pin_memory) {
  TORCH_CHECK(
      c10::layout_or_default(layout) == c10::Layout::Strided,
      "only strided tensors are simulated");
  TORCH_CHECK(
      !pin_memory.value_or(false), "Only dense CPU tensors can be pinned");
}

at::Tensor empty_memory_format(
    c10::IntArrayRef size,
    std::optional<c10::ScalarType> dtype,
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory,
    std::optional<c10::MemoryFormat> memory_format) {
  check_factory(layout, pin_memory);
  // The allocator serves the current device, as CUDA's does.
  c10::DeviceGuard guard(c10::Device(kDevice, index_of(device)));
  return at::detail::empty_generic(
      size,
      device_allocator(),
      kKeys,
      c10::dtype_or_default(dtype),
      memory_format);
}

at::Tensor empty_strided(
    c10::IntArrayRef size,
    c10::IntArrayRef stride,
    std::optional<c10::ScalarType> dtype,
    std::optional<c10::Layout> layout,
    std::optional<c10::Device> device,
    std::optional<bool> pin_memory) {
  check_factory(layout, pin_memory);
  c10::DeviceGuard guard(c10::Device(kDevice, index_of(device)));
  return at::detail::empty_strided_generic(
      size, stride, device_allocator(), kKeys, c10::dtype_or_default(dtype));
}

// Copies between devices and the host: all memory is host memory, so copying
// is a CPU copy_ between aliases (which also converts dtypes and strides).
at::Tensor copy_from(
    const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  if (self.numel() > 0) {
    {
      HostAccess access;
      auto source = access.read(self);
      access.write(dst).copy_(source);
    }
    if (!non_blocking && self.device().is_cpu() != dst.device().is_cpu()) {
      host_waited(self.device().is_cpu() ? dst : self);
    }
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  at::Scalar value;
  {
    HostAccess access;
    value = at::_local_scalar_dense(access.read(self));
  }
  host_waited(self);
  return value;
}

void ensure_storage(const at::Tensor& self) {
  auto needed = at::detail::computeStorageNbytes(
      self.sizes(),
      self.strides(),
      self.dtype().itemsize(),
      self.storage_offset());
  if (needed > self.storage().nbytes()) {
    resize_storage(self.storage(), needed);
  }
}

const at::Tensor& resize_(
    const at::Tensor& self,
    c10::IntArrayRef size,
    std::optional<c10::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  if (self.sizes() != size) {
    impl->set_sizes_contiguous(size);
  }
  if (memory_format) {
    TORCH_CHECK(
        *memory_format != c10::MemoryFormat::Preserve,
        "Unsupported memory format Preserve");
    impl->empty_tensor_restride(*memory_format);
  }
  ensure_storage(self);
  return self;
}

at::Tensor& set_storage_offset(
    at::Tensor& self,
    c10::Storage source,
    int64_t offset,
    c10::IntArrayRef size,
    c10::IntArrayRef stride) {
  TORCH_CHECK(
      source.device().type() == kDevice,
      "Attempted to set the storage of a tensor on device \"",
      self.device(),
      "\" to a storage on different device \"",
      source.device(),
      "\".  This is no longer allowed; the devices must match.");
  auto* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) {
    impl->set_storage_keep_dtype(std::move(source));
  }
  impl->set_storage_offset(offset);
  if (stride.empty()) {
    impl->set_sizes_contiguous(size);
  } else {
    impl->set_sizes_and_strides(size, stride);
  }
  ensure_storage(self);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t numel = source.nbytes() / self.dtype().itemsize();
  return set_storage_offset(self, std::move(source), 0, {numel}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) {
    return self;
  }
  return set_storage_offset(
      self,
      source.storage(),
      source.storage_offset(),
      source.sizes(),
      source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  c10::Storage storage(
      c10::Storage::use_byte_size_t(), 0, device_allocator(), true);
  return set_storage_offset(self, std::move(storage), 0, {0}, {});
}

void record_stream(at::Tensor&, c10::Stream stream) {
  // Memory is never reused early, so there is nothing to record.
  TORCH_CHECK(
      stream.device_type() == kDevice,
      "record_stream expects a ",
      c10::DeviceTypeName(kDevice, true),
      " stream, got one of ",
      stream.device());
}

// Dropout draws its mask from the device generator: the CPU kernel would
// silently use the CPU generator, since native_dropout takes none.
std::tuple<at::Tensor, at::Tensor> native_dropout(
    const at::Tensor& input, double p, std::optional<bool> train) {
  if (!train.value_or(true) || input.numel() == 0) {
    return {
        input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  }
  double keep = 1.0 - p;
  auto mask = at::empty_like(input).bernoulli_(keep);
  auto output = input.mul(mask).mul_(keep == 0.0 ? 0.0 : 1.0 / keep);
  return {output, mask.to(at::kBool)};
}

bool is_generator(const c10::Argument& argument) {
  auto type = argument.type();
  if (auto optional = type->cast<c10::OptionalType>()) {
    type = optional->getElementType();
  }
  return type->kind() == c10::TypeKind::GeneratorType;
}

// Ops whose CUDA kernels check that every tensor is on the device (matrix
// products, indexing, losses with class targets): there a 0-dim CPU tensor
// is refused. Elsewhere CUDA's TensorIterator takes it as a scalar.
bool checks_every_device(const c10::OperatorName& name) {
  static const std::unordered_set<std::string> names = {
      "aten::mm",
      "aten::bmm",
      "aten::addmm",
      "aten::addmv",
      "aten::addr",
      "aten::addbmm",
      "aten::baddbmm",
      "aten::mv",
      "aten::dot",
      "aten::vdot",
      "aten::_addmm_activation",
      "aten::index_select",
      "aten::gather",
      "aten::scatter",
      "aten::scatter_",
      "aten::scatter_add",
      "aten::scatter_add_",
      "aten::scatter_reduce",
      "aten::scatter_reduce_",
      "aten::embedding",
      "aten::embedding_dense_backward",
      "aten::_embedding_bag",
      "aten::_embedding_bag_forward_only",
      "aten::index_add",
      "aten::index_add_",
      "aten::index_copy",
      "aten::index_copy_",
      "aten::index_reduce",
      "aten::index_reduce_",
      "aten::take",
      "aten::put",
      "aten::put_",
      "aten::masked_scatter",
      "aten::masked_scatter_",
      "aten::searchsorted",
      "aten::bucketize",
      "aten::nll_loss_forward",
      "aten::nll_loss2d_forward",
      "aten::nll_loss_backward",
      "aten::nll_loss2d_backward",
      "aten::_cdist_forward",
      "aten::linalg_cross",
  };
  return names.count(name.name) > 0;
}

[[noreturn]] void device_mismatch(c10::Device a, c10::Device b) {
  // TensorIterator's wording, which CUDA users know.
  TORCH_CHECK(
      false,
      "Expected all tensors to be on the same device, but found at least two "
      "devices, ",
      a,
      " and ",
      b,
      "!");
}

// Generators: RNG ops get the CPU generator behind the device generator, as
// CPU kernels insist on a CPU generator; a CPU generator passed for device
// work (or the reverse) fails as it does on CUDA.
void swap_generators(
    const c10::FunctionSchema& schema,
    torch::jit::Stack* stack,
    size_t base,
    c10::Device target) {
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_generator(args[i])) {
      continue;
    }
    auto& value = (*stack)[base + i];
    if (value.isNone()) {
      if (target.type() == kDevice) {
        value = host_generator(default_generator(target.index()));
      }
      continue;
    }
    auto gen = value.toGenerator();
    TORCH_CHECK(
        gen.device().type() == target.type(),
        "Expected a '",
        c10::DeviceTypeName(target.type(), true),
        "' device type for generator but found '",
        c10::DeviceTypeName(gen.device().type(), true),
        "'");
    if (target.type() == kDevice) {
      value = host_generator(gen);
    }
  }
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  KernelScope kernel;
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t base = stack->size() - args.size();

  // The point of the simulator: refuse what a GPU refuses, before the CPU
  // kernel would quietly accept it. As on CUDA, 0-dim CPU tensors pass as
  // scalars (except where CUDA checks every device) and CPU index tensors
  // are fine for indexing.
  const bool scalars_ok = !checks_every_device(schema.operator_name());
  std::optional<c10::Device> common;
  auto check = [&](const at::Tensor& t, bool cpu_ok) {
    if (!t.defined() || (cpu_ok && t.device().is_cpu())) {
      return;
    }
    if (!common) {
      common = t.device();
    } else if (t.device() != *common) {
      device_mismatch(*common, t.device());
    }
  };
  std::optional<c10::Device> device_arg;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& value = (*stack)[base + i];
    bool written = args[i].alias_info() && args[i].alias_info()->isWrite();
    if (value.isTensor()) {
      const auto& t = value.toTensor();
      check(t, scalars_ok && !written && t.defined() && t.dim() == 0);
    } else if (value.isOptionalTensorList()) {
      for (std::optional<at::Tensor> t : value.toOptionalTensorList()) {
        if (t.has_value()) {
          check(*t, true);
        }
      }
    } else if (value.isTensorList()) {
      for (const auto& t : value.toTensorList()) {
        check(t, false);
      }
    } else if (value.isDevice()) {
      device_arg = value.toDevice();
    }
  }
  auto target = common ? *common : device_arg.value_or(c10::Device(kDevice));
  if (target.type() == kDevice && !target.has_index()) {
    target = c10::Device(kDevice, current_device());
  }
  swap_generators(schema, stack, base, target);
  // Kernels that compute on the host still see the right current device.
  c10::OptionalDeviceGuard guard;
  if (target.type() == kDevice) {
    guard.reset_device(target);
  }
  at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &empty_memory_format);
  m.impl("empty_strided", &empty_strided);
  m.impl("_copy_from", &copy_from);
  m.impl("_copy_from_and_resize", &copy_from_and_resize);
  m.impl("_local_scalar_dense", &local_scalar_dense);
  m.impl("resize_", &resize_);
  m.impl("set_.source_Storage_storage_offset", &set_storage_offset);
  m.impl("set_.source_Storage", &set_source_storage);
  m.impl("set_.source_Tensor", &set_source_tensor);
  m.impl("set_", &set_empty);
  m.impl("native_dropout", &native_dropout);
  m.impl("record_stream", &record_stream);
  // Views share the device storage; the CPU fallback could only copy.
  m.impl("as_strided", &at::native::as_strided_tensorimpl);
  m.impl("view", &at::native::view);
  m.impl("_reshape_alias", &at::native::_reshape_alias);
  m.impl("unfold", &at::native::unfold);
  m.impl("view_as_real", &at::native::view_as_real);
  m.impl("view_as_complex", &at::native::view_as_complex);
}

// copy_ hands PrivateUse1 copies to _copy_from before it resolves conjugate
// and negative views, and those keys' fallbacks would clone (and copy_)
// forever; _copy_from copies through aliases that keep both bits instead.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

} // namespace

void check_devices(std::initializer_list<const at::Tensor*> tensors) {
  std::optional<c10::Device> common;
  for (const auto* t : tensors) {
    if (!common) {
      common = t->device();
    } else if (t->device() != *common) {
      device_mismatch(*common, t->device());
    }
  }
}

KernelScope::KernelScope() {
  ++kernel_depth;
}

KernelScope::~KernelScope() {
  --kernel_depth;
}

HostAccess::~HostAccess() {
  for (const void* base : opened_) {
    close_block(base);
  }
}

at::Tensor HostAccess::read(const at::Tensor& t) {
  return alias(t, false);
}

at::Tensor HostAccess::write(const at::Tensor& t) {
  return alias(t, true);
}

at::Tensor HostAccess::alias(const at::Tensor& t, bool write) {
  if (!t.defined() || t.device().type() != kDevice) {
    return t;
  }
  auto options = t.options().device(c10::kCPU);
  if (t.numel() == 0) {
    return at::empty(t.sizes(), options);
  }
  if (auto block = open_block(t.storage().data())) {
    opened_.push_back(block->base);
    check_access(*block, write);
  }
  auto alias = at::from_blob(t.data_ptr(), t.sizes(), t.strides(), options);
  alias._set_conj(t.is_conj());
  alias._set_neg(t.is_neg());
  return alias;
}

} // namespace tpsim
