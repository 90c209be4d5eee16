// Generators, the PrivateUse1 hooks torch asks an accelerator for (device
// count, generators, pinned memory), and the few functions the Python side
// needs, registered as ops of the `tpsim` library (no pybind: smaller build).
#include "sim.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/GeneratorImpl.h>
#include <torch/library.h>

#include <array>
#include <mutex>

namespace tpsim {
namespace {

// XORed into the seed of the CPU generator behind each device generator, so
// that, as on CUDA, torch.randn(n, device=dev) under a seed differs from
// torch.randn(n).to(dev): a port that moved a CPU draw to the device shows.
constexpr uint64_t kSalt = 0x7470'7369'6d00'0000ULL; // "tpsim"

// A device generator: the state lives in a CPU generator, which the CPU
// kernels run by the fallback accept (they insist on a CPU generator).
struct Generator final : public c10::GeneratorImpl {
  Generator(c10::DeviceIndex index, at::Generator host)
      : c10::GeneratorImpl(
            c10::Device(kDevice, index),
            c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
        host_(std::move(host)) {}

  static c10::DeviceType device_type() {
    return kDevice;
  }
  void set_current_seed(uint64_t seed) override {
    host_.set_current_seed(seed ^ kSalt);
  }
  uint64_t current_seed() const override {
    return host_.current_seed() ^ kSalt;
  }
  uint64_t seed() override {
    auto s = c10::detail::getNonDeterministicRandom();
    set_current_seed(s);
    return s;
  }
  void set_offset(uint64_t offset) override {
    host_.set_offset(offset);
  }
  uint64_t get_offset() const override {
    return host_.get_offset();
  }
  void set_state(const c10::TensorImpl& state) override {
    host_.unsafeGetGeneratorImpl()->set_state(state);
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    return host_.unsafeGetGeneratorImpl()->get_state();
  }
  Generator* clone_impl() const override {
    return new Generator(device_.index(), host_.clone());
  }

  at::Generator host_;
};

at::Generator make(c10::DeviceIndex index, uint64_t seed) {
  auto host = at::make_generator<at::CPUGeneratorImpl>(seed ^ kSalt);
  return at::make_generator<Generator>(index, std::move(host));
}

c10::DeviceIndex resolve(c10::DeviceIndex index) {
  index = index < 0 ? current_device() : index;
  check_index(index);
  return index;
}

struct Hooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return device_count() > 0;
  }
  bool hasPrimaryContext(c10::DeviceIndex) const override {
    return true;
  }
  void init() const override {}
  c10::DeviceIndex deviceCount() const override {
    return device_count();
  }
  void setCurrentDevice(c10::DeviceIndex index) const override {
    set_device(index);
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return current_device();
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    auto old = current_device();
    if (index >= 0) {
      set_device(index);
    }
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override {
    return exchangeDevice(index);
  }
  const at::Generator& getDefaultGenerator(
      c10::DeviceIndex index) const override {
    return default_generator(index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return new_generator(index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    auto index = device_of(data);
    TORCH_CHECK(index, "the pointer was not allocated by the simulator");
    return at::Device(kDevice, *index);
  }
  bool isPinnedPtr(const void* data) const override {
    return tpsim::is_pinned(data);
  }
  at::Allocator* getPinnedMemoryAllocator() const override {
    return host_allocator();
  }
  void resizePrivateUse1Bytes(
      const c10::Storage& storage, size_t nbytes) const override {
    resize_storage(storage, nbytes);
  }
};

[[maybe_unused]] const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks());
  return true;
}();

int64_t op_device_count() {
  return device_count();
}

void op_manual_seed_all(int64_t seed) {
  for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
    auto gen = default_generator(i);
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(static_cast<uint64_t>(seed));
  }
}

void op_manual_seed(int64_t seed, int64_t index) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(static_cast<uint64_t>(seed));
}

at::Tensor op_get_rng_state(int64_t index) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void op_set_rng_state(const at::Tensor& state, int64_t index) {
  auto gen = default_generator(static_cast<c10::DeviceIndex>(index));
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

TORCH_LIBRARY(tpsim, m) {
  m.def("device_count() -> int", &op_device_count);
  m.def("manual_seed_all(int seed) -> ()", &op_manual_seed_all);
  m.def("manual_seed(int seed, int device) -> ()", &op_manual_seed);
  m.def("get_rng_state(int device) -> Tensor", &op_get_rng_state);
  m.def("set_rng_state(Tensor state, int device) -> ()", &op_set_rng_state);
}

} // namespace

const at::Generator& default_generator(c10::DeviceIndex index) {
  // Leaked so they outlive every user at exit; created on first use.
  static auto* generators = new std::array<at::Generator, 16>();
  static auto* once = new std::array<std::once_flag, 16>();
  index = resolve(index);
  std::call_once((*once)[index], [&] {
    (*generators)[index] = make(index, c10::default_rng_seed_val);
  });
  return (*generators)[index];
}

at::Generator new_generator(c10::DeviceIndex index) {
  return make(resolve(index), c10::default_rng_seed_val);
}

at::Generator host_generator(const at::Generator& device_generator) {
  auto* impl =
      dynamic_cast<Generator*>(device_generator.unsafeGetGeneratorImpl());
  TORCH_CHECK(impl, "not a ", c10::DeviceTypeName(kDevice, true), " generator");
  return impl->host_;
}

} // namespace tpsim
