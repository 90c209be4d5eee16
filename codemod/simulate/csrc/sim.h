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
#include <c10/core/Stream.h>

#include <optional>
#include <vector>

namespace tpsim {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

// device.cpp: devices and the thread's current device and streams, as the
// CUDA runtime keeps them (the current device is per host thread).
c10::DeviceIndex device_count() noexcept;
c10::DeviceIndex current_device();
void set_device(c10::DeviceIndex index);
void check_index(c10::DeviceIndex index);
c10::StreamId current_stream_id(c10::DeviceIndex index);

// memory.cpp: a counting device allocator and a pinned host allocator.
c10::DeviceAllocator* device_allocator();
c10::Allocator* host_allocator();
bool is_pinned(const void* ptr);
std::optional<c10::DeviceIndex> device_of(const void* ptr);
void resize_storage(const c10::Storage& storage, size_t nbytes);
// Device memory is mapped inaccessible (unless TORCHPORT_SIM_PROTECT=0), as
// a real device's memory is to the host: a stray host read faults and is
// reported. The simulator's own host work opens a block for its duration.
struct DeviceBlock {
  const void* base;
  size_t size;
  c10::DeviceIndex device;
};
std::optional<DeviceBlock> open_block(const void* ptr);
void close_block(const void* base);

// streams.cpp: the stream check. Work runs at once, so nothing here waits;
// it remembers which stream last wrote (and read) each block and what each
// stream has waited for (events, wait_stream, synchronize), and refuses an
// access that a GPU would not order after that work, as CUDA's stream
// sanitizer does (off with TORCHPORT_SIM_STREAM_CHECK=0).
void check_access(const DeviceBlock& block, bool write);
void forget_block(const void* base);
void event_recorded(const void* event, const c10::Stream& stream);
void stream_waits_event(const void* event, const c10::Stream& stream);
void host_waits_event(const void* event);
void host_waits_stream(const c10::Stream& stream);
void host_waits_device(c10::DeviceIndex index);
void event_destroyed(const void* event);

// hooks.cpp: one default generator per device, seeded like CUDA's.
const at::Generator& default_generator(c10::DeviceIndex index);
at::Generator new_generator(c10::DeviceIndex index);
// The CPU generator a device generator draws from (CPU kernels need one).
at::Generator host_generator(const at::Generator& device_generator);

// kernels.cpp: CPU tensors aliasing the memory of device tensors, for the
// host work of one operation (blocks opened and stream-checked, closed when
// it ends), and CUDA's same-device check for kernels outside the fallback.
class HostAccess {
 public:
  HostAccess() = default;
  HostAccess(const HostAccess&) = delete;
  HostAccess& operator=(const HostAccess&) = delete;
  ~HostAccess();
  at::Tensor read(const at::Tensor& t);
  at::Tensor write(const at::Tensor& t);

 private:
  at::Tensor alias(const at::Tensor& t, bool write);
  std::vector<const void*> opened_;
};
void check_devices(std::initializer_list<const at::Tensor*> tensors);
// The simulator's own work for one operation (the fallback, the layers): its
// copies are the kernel's, not transfers a program asked for, which wait for
// the stream when they are blocking (see copy_from).
class KernelScope {
 public:
  KernelScope();
  ~KernelScope();
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;
};

} // namespace tpsim
