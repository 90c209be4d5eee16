// tpsim: a simulated accelerator registered as the PrivateUse1 backend.
// Device memory is host memory; every operator without a kernel of its own
// runs through a boxed CPU fallback (kernels.cpp) that first checks devices
// the way CUDA does. This header is what the translation units share.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Device.h>
#include <c10/core/Storage.h>

namespace tpsim {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

// device.cpp: devices and the thread's current device, as the CUDA runtime
// keeps them (the current device is per host thread).
c10::DeviceIndex device_count() noexcept;
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
void check_index(c10::DeviceIndex index);

// memory.cpp: a counting device allocator and a pinned host allocator.
c10::DeviceAllocator* device_allocator();
c10::Allocator* host_allocator();
bool is_pinned(const void* ptr);
std::optional<c10::DeviceIndex> device_of(const void* ptr);
void resize_storage(const c10::Storage& storage, size_t nbytes);

// hooks.cpp: one default generator per device, seeded like CUDA's.
const at::Generator& default_generator(c10::DeviceIndex index);
at::Generator new_generator(c10::DeviceIndex index);
// The CPU generator a device generator draws from (CPU kernels need one).
at::Generator host_generator(const at::Generator& device_generator);

// kernels.cpp: a CPU tensor aliasing the host memory of a device tensor, and
// CUDA's same-device check for kernels that do not go through the fallback.
at::Tensor host_alias(const at::Tensor& t);
void check_devices(std::initializer_list<const at::Tensor*> tensors);

} // namespace tpsim
