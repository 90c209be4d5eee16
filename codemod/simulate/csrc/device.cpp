// Devices, streams and events. Work runs synchronously on the host, so a
// stream is only an id and an event only a timestamp; the bookkeeping (which
// stream is current, on which device an event was recorded, timing flags) is
// real, so code that mixes devices or streams up fails as it would on a GPU,
// and every wait and synchronisation is told to the stream check.
#include "sim.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

namespace tpsim {
namespace {

constexpr int kMaxDevices = 16;

c10::DeviceIndex read_device_count() {
  const char* env = std::getenv("TORCHPORT_SIM_DEVICES");
  if (env == nullptr || *env == '\0') {
    return 2;
  }
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 0 || n > kMaxDevices) {
    // noexcept callers (deviceCount) must not throw: fall back to the default.
    return 2;
  }
  return static_cast<c10::DeviceIndex>(n);
}

thread_local c10::DeviceIndex tls_device = 0;

// Stream 0 of each device is its default stream; new streams get fresh ids.
thread_local std::array<c10::StreamId, kMaxDevices> tls_streams{};
std::atomic<c10::StreamId> next_stream_id{1};

struct Event {
  c10::DeviceIndex device;
  std::chrono::steady_clock::time_point when;
};

c10::Stream make_stream(c10::DeviceIndex index, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kDevice, index), id);
}

c10::DeviceIndex index_of(c10::Device d) {
  return d.has_index() ? d.index() : current_device();
}

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kDevice;
  }
  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old(kDevice, current_device());
    if (d.index() != old.index()) {
      set_device(d.index());
    }
    return old;
  }
  c10::Device getDevice() const override {
    return c10::Device(kDevice, current_device());
  }
  void setDevice(c10::Device d) const override {
    set_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count()) {
      tls_device = d.index();
    }
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return device_count();
  }
  c10::DeviceCapability getDeviceCapability(c10::Device) const override {
    return c10::DeviceCapability();
  }

  c10::Stream getStream(c10::Device d) const override {
    auto index = index_of(d);
    check_index(index);
    return make_stream(index, tls_streams[index]);
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return make_stream(index_of(d), 0);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return getNewStream(d, 0);
  }
  c10::Stream getNewStream(c10::Device d, int) const override {
    auto index = index_of(d);
    check_index(index);
    return make_stream(index, next_stream_id++);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    auto index = s.device_index();
    check_index(index);
    auto old = make_stream(index, tls_streams[index]);
    tls_streams[index] = s.id();
    return old;
  }
  // A query that answers "done" orders the host after the work, as the
  // synchronisation that a polling loop ends with does.
  bool queryStream(const c10::Stream& stream) const override {
    host_waits_stream(stream);
    return true;
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    host_waits_stream(stream);
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    if (index >= 0) {
      check_index(index);
    }
    host_waits_device(index);
  }
  void recordDataPtrOnStream(
      const c10::DataPtr&, const c10::Stream&) const override {}

  void record(
      void** event,
      const c10::Stream& stream,
      const c10::DeviceIndex device_index,
      const c10::EventFlag) const override {
    // Same check (and wording) as CUDA's guard: an event belongs to a device.
    TORCH_CHECK(
        device_index == -1 || device_index == stream.device_index(),
        "Event device index ",
        static_cast<int>(device_index),
        " does not match recording stream's device index ",
        static_cast<int>(stream.device_index()),
        ".");
    auto* e = static_cast<Event*>(*event);
    if (e == nullptr) {
      e = new Event();
      *event = e;
    }
    e->device = stream.device_index();
    e->when = std::chrono::steady_clock::now();
    event_recorded(e, stream);
  }
  void block(void* event, const c10::Stream& stream) const override {
    // Everything already ran: waiting only orders the stream after the event.
    if (event != nullptr) {
      check_index(stream.device_index());
      stream_waits_event(event, stream);
    }
  }
  bool queryEvent(void* event) const override {
    if (event != nullptr) {
      host_waits_event(event);
    }
    return true;
  }
  void synchronizeEvent(void* event) const override {
    if (event != nullptr) {
      host_waits_event(event);
    }
  }
  double elapsedTime(
      void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(
        start != nullptr && end != nullptr,
        "Both events must be recorded before calculating elapsed time.");
    auto* a = static_cast<Event*>(start);
    auto* b = static_cast<Event*>(end);
    TORCH_CHECK(
        a->device == b->device,
        "Both events must be recorded on the same device: got ",
        c10::Device(kDevice, a->device),
        " and ",
        c10::Device(kDevice, b->device),
        ".");
    std::chrono::duration<double, std::milli> ms = b->when - a->when;
    return ms.count();
  }
  void destroyEvent(
      void* event, const c10::DeviceIndex) const noexcept override {
    if (event != nullptr) {
      try {
        event_destroyed(event);
      } catch (...) { // noexcept: forgetting it is only bookkeeping
      }
    }
    delete static_cast<Event*>(event);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl)

} // namespace

c10::DeviceIndex device_count() noexcept {
  static const c10::DeviceIndex count = read_device_count();
  return count;
}

void check_index(c10::DeviceIndex index) {
  TORCH_CHECK(
      index >= 0 && index < device_count(),
      "Invalid device index ",
      static_cast<int>(index),
      " for ",
      c10::DeviceTypeName(kDevice, true),
      ": ",
      static_cast<int>(device_count()),
      " device(s) are simulated (set TORCHPORT_SIM_DEVICES for more)");
}

c10::DeviceIndex current_device() {
  return tls_device;
}

void set_device(c10::DeviceIndex index) {
  check_index(index);
  tls_device = index;
}

c10::StreamId current_stream_id(c10::DeviceIndex index) {
  return index >= 0 && index < kMaxDevices ? tls_streams[index] : 0;
}

} // namespace tpsim
