// Memory: a device allocator that counts like CUDA's caching allocator does
// (so torch.accelerator.memory_* report real numbers and a capacity can run
// out), and a pinned host allocator (so pin_memory()/is_pinned() and
// DataLoader(pin_memory=True) take the accelerator path). Device blocks are
// pages of their own, inaccessible while the simulator is not working on
// them: host code that reads a device tensor's memory faults, as it does on
// a real device, and the fault is explained before the usual crash report.
#include "sim.h"

#include <ATen/core/CachingHostAllocator.h>
#include <c10/util/Exception.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace tpsim {
namespace {

using c10::CachingDeviceAllocator::DeviceStats;

constexpr size_t kAlignment = 64;
constexpr size_t kLargeBlock = 1 << 20; // CUDA's small/large pool boundary
constexpr c10::DeviceIndex kHost = -1;

size_t capacity_bytes() {
  // TORCHPORT_SIM_MEMORY_MB sets each device's capacity (default 16 GiB).
  static const size_t bytes = [] {
    const char* env = std::getenv("TORCHPORT_SIM_MEMORY_MB");
    long long mb = env ? std::atoll(env) : 0;
    return static_cast<size_t>(mb > 0 ? mb : 16 * 1024) << 20;
  }();
  return bytes;
}

struct Block {
  size_t size;
  c10::DeviceIndex device; // kHost for pinned host memory
  size_t mapped = 0; // bytes of protected pages, 0 for malloc'd memory
  int open = 0; // host accesses in progress
};

// TORCHPORT_SIM_MEMORY_STATS=0: a backend without allocator statistics, as
// TorchTPU is, so code that needs them fails as it would there.
void check_stats_kept() {
  static const bool kept = [] {
    const char* env = std::getenv("TORCHPORT_SIM_MEMORY_STATS");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  TORCH_CHECK(
      kept,
      c10::DeviceTypeName(kDevice, true),
      " keeps no allocator statistics in this run "
      "(TORCHPORT_SIM_MEMORY_STATS=0), as some backends keep none");
}

bool protect_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("TORCHPORT_SIM_PROTECT");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return on;
}

// Live allocations by address, so pointers can be mapped back to a device
// or recognised as pinned (an ordered map answers interior pointers too).
// Leaked on purpose: tensors may still be freed during interpreter exit.
struct State {
  std::mutex mutex;
  std::map<const char*, Block> blocks;
  std::vector<DeviceStats> stats = std::vector<DeviceStats>(16);
  at::HostStats host;
};

State& state() {
  static auto* s = new State();
  return *s;
}

std::map<const char*, Block>::iterator find_entry(State& st, const void* ptr) {
  auto p = static_cast<const char*>(ptr);
  auto it = st.blocks.upper_bound(p);
  if (it == st.blocks.begin()) {
    return st.blocks.end();
  }
  --it;
  auto extent = std::max<size_t>({it->second.size, it->second.mapped, 1});
  return p < it->first + extent ? it : st.blocks.end();
}

std::optional<Block> find_block(State& st, const void* ptr) {
  auto it = find_entry(st, ptr);
  return it == st.blocks.end() ? std::nullopt : std::optional(it->second);
}

struct sigaction previous_segv;

// A fault on a protected block: say so, then let the previous handler (the
// Python traceback of faulthandler, or the default crash) take the fault
// again when the instruction repeats.
void on_segv(int, siginfo_t* info, void*) {
  auto& st = state();
  std::optional<Block> block;
  if (st.mutex.try_lock()) {
    block = find_block(st, info->si_addr);
    st.mutex.unlock();
  }
  if (block && block->device != kHost && block->mapped > 0) {
    char text[640];
    int n = std::snprintf(
        text,
        sizeof(text),
        "\ntpsim: host code read or wrote device memory (address %p, in a "
        "%zu-byte block on tpsim:%d): a device tensor's memory is not host "
        "memory, on this simulated accelerator as on a real one. Copy it to "
        "the host first (t.cpu(), t.tolist()) instead of reading its "
        "data_ptr() from host code. TORCHPORT_SIM_PROTECT=0 turns this "
        "protection off.\n",
        info->si_addr,
        block->size,
        static_cast<int>(block->device));
    if (n > 0) {
      auto written = ::write(2, text, std::min<size_t>(n, sizeof(text) - 1));
      (void)written;
    }
  }
  sigaction(SIGSEGV, &previous_segv, nullptr);
}

[[maybe_unused]] const bool segv_handler_installed = [] {
  if (!protect_enabled()) {
    return false;
  }
  struct sigaction action {};
  action.sa_sigaction = &on_segv;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  return sigaction(SIGSEGV, &action, &previous_segv) == 0;
}();

size_t page_size() {
  static const size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

bool set_protection(const char* base, const Block& block, int prot) {
  return block.mapped == 0 ||
      mprotect(const_cast<char*>(base), block.mapped, prot) == 0;
}

void count(DeviceStats& s, size_t size, bool alloc) {
  auto pool = size >= kLargeBlock ? 2 : 1;
  for (int i : {0, pool}) {
    for (auto* stat : {&s.allocation[i], &s.segment[i], &s.active[i]}) {
      alloc ? stat->increase(1) : stat->decrease(1);
    }
    for (auto* stat :
         {&s.allocated_bytes[i],
          &s.reserved_bytes[i],
          &s.active_bytes[i],
          &s.requested_bytes[i]}) {
      alloc ? stat->increase(size) : stat->decrease(size);
    }
  }
  alloc ? ++s.num_device_alloc : ++s.num_device_free;
}

void count_host(at::HostStats& h, size_t size, bool alloc) {
  if (alloc) {
    h.allocations.increase(1);
    h.allocated_bytes.increase(size);
    h.active_requests.increase(1);
    h.active_bytes.increase(size);
    ++h.num_host_alloc;
  } else {
    h.allocations.decrease(1);
    h.allocated_bytes.decrease(size);
    h.active_requests.decrease(1);
    h.active_bytes.decrease(size);
    ++h.num_host_free;
  }
}

template <typename F> void for_each_stat(DeviceStats& s, F f) {
  for (auto* arr :
       {&s.allocation,
        &s.segment,
        &s.active,
        &s.inactive_split,
        &s.allocated_bytes,
        &s.reserved_bytes,
        &s.active_bytes,
        &s.inactive_split_bytes,
        &s.requested_bytes}) {
    for (auto& stat : *arr) {
      f(stat);
    }
  }
}

void* raw_alloc(size_t size, c10::DeviceIndex device) {
  if (size == 0) {
    return nullptr;
  }
  void* ptr = nullptr;
  size_t mapped = 0;
  if (device != kHost && protect_enabled()) {
    auto pages = (size + page_size() - 1) / page_size() * page_size();
    void* m = mmap(
        nullptr, pages, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) { // else (out of mappings) unprotected memory
      ptr = m;
      mapped = pages;
    }
  }
  if (ptr == nullptr) {
    size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    ptr = std::aligned_alloc(kAlignment, rounded);
  }
  TORCH_CHECK_WITH(
      OutOfMemoryError, ptr, "host out of memory allocating ", size, " bytes");
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.blocks[static_cast<const char*>(ptr)] = Block{size, device, mapped};
  device == kHost ? count_host(st.host, size, true)
                  : count(st.stats[device], size, true);
  return ptr;
}

void raw_free(void* ptr) {
  if (ptr == nullptr) {
    return;
  }
  auto& st = state();
  size_t mapped = 0;
  bool on_device = false;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    auto it = st.blocks.find(static_cast<const char*>(ptr));
    if (it != st.blocks.end()) {
      auto size = it->second.size;
      auto device = it->second.device;
      mapped = it->second.mapped;
      on_device = device != kHost;
      device == kHost ? count_host(st.host, size, false)
                      : count(st.stats[device], size, false);
      st.blocks.erase(it);
    }
  }
  if (on_device) {
    forget_block(ptr);
  }
  if (mapped > 0) {
    munmap(ptr, mapped);
  } else {
    std::free(ptr);
  }
}

struct DeviceAllocatorImpl final : public c10::DeviceAllocator {
  c10::DataPtr allocate(size_t n) override {
    auto device = current_device();
    check_index(device);
    auto& st = state();
    {
      std::lock_guard<std::mutex> lock(st.mutex);
      auto& s = st.stats[device];
      auto in_use = static_cast<size_t>(s.reserved_bytes[0].current);
      if (in_use + n > capacity_bytes()) {
        ++s.num_ooms;
        TORCH_CHECK_WITH(
            OutOfMemoryError,
            false,
            c10::DeviceTypeName(kDevice, true),
            " out of memory. Tried to allocate ",
            n >> 20,
            " MiB. Device ",
            static_cast<int>(device),
            " has a total capacity of ",
            capacity_bytes() >> 20,
            " MiB of which ",
            (capacity_bytes() - in_use) >> 20,
            " MiB is free (TORCHPORT_SIM_MEMORY_MB sets the capacity).");
      }
    }
    void* ptr = raw_alloc(n, device);
    return {ptr, ptr, &raw_free, c10::Device(kDevice, device)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &raw_free;
  }
  void copy_data(
      void* dest, const void* src, std::size_t count) const override {
    auto from = open_block(src);
    auto to = open_block(dest);
    std::memcpy(dest, src, count);
    for (const auto& block : {from, to}) {
      if (block) {
        close_block(block->base);
      }
    }
  }
  bool initialized() override {
    return true;
  }
  // Nothing is cached: reserved memory is exactly the memory in use.
  void emptyCache(c10::MempoolId_t) override {}
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_stats_kept();
    check_index(device);
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().stats[device];
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_stats_kept();
    check_index(device);
    std::lock_guard<std::mutex> lock(state().mutex);
    auto& s = state().stats[device];
    for_each_stat(s, [](c10::CachingAllocator::Stat& x) {
      x.reset_accumulated();
    });
    s.num_alloc_retries = s.num_ooms = 0;
    s.num_device_alloc = s.num_device_free = 0;
  }
  void resetPeakStats(c10::DeviceIndex device) override {
    check_stats_kept();
    check_index(device);
    std::lock_guard<std::mutex> lock(state().mutex);
    for_each_stat(state().stats[device], [](c10::CachingAllocator::Stat& x) {
      x.reset_peak();
    });
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    check_index(device);
    std::lock_guard<std::mutex> lock(state().mutex);
    auto used = state().stats[device].reserved_bytes[0].current;
    return {capacity_bytes() - static_cast<size_t>(used), capacity_bytes()};
  }
};

// Pinned memory is ordinary host memory that the simulator remembers.
struct HostAllocatorImpl final : public at::HostAllocator {
  c10::DataPtr allocate(size_t n) override {
    void* ptr = raw_alloc(n, kHost);
    return {ptr, ptr, &raw_free, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &raw_free;
  }
  void copy_data(
      void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
  bool record_event(void*, void*, c10::Stream) override {
    return true;
  }
  void empty_cache() override {}
  at::HostStats get_stats() override {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().host;
  }
  void reset_accumulated_stats() override {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto& h = state().host;
    for (auto* s : {&h.allocations, &h.allocated_bytes}) {
      s->reset_accumulated();
    }
    for (auto* s : {&h.active_requests, &h.active_bytes}) {
      s->reset_accumulated();
    }
  }
  void reset_peak_stats() override {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto& h = state().host;
    for (auto* s : {&h.allocations, &h.allocated_bytes}) {
      s->reset_peak();
    }
    for (auto* s : {&h.active_requests, &h.active_bytes}) {
      s->reset_peak();
    }
  }
};

// Leaked, like the state above, so they outlive every tensor.
auto* device_alloc = new DeviceAllocatorImpl();
auto* host_alloc = new HostAllocatorImpl();

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, device_alloc)
REGISTER_HOST_ALLOCATOR(c10::DeviceType::PrivateUse1, host_alloc)

} // namespace

c10::DeviceAllocator* device_allocator() {
  return device_alloc;
}

c10::Allocator* host_allocator() {
  return host_alloc;
}

bool is_pinned(const void* ptr) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto block = find_block(state(), ptr);
  return block && block->device == kHost;
}

std::optional<c10::DeviceIndex> device_of(const void* ptr) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto block = find_block(state(), ptr);
  if (block && block->device != kHost) {
    return block->device;
  }
  return std::nullopt;
}

std::optional<DeviceBlock> open_block(const void* ptr) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = find_entry(st, ptr);
  if (it == st.blocks.end() || it->second.device == kHost) {
    return std::nullopt;
  }
  if (it->second.open == 0) {
    TORCH_CHECK(
        set_protection(it->first, it->second, PROT_READ | PROT_WRITE),
        "tpsim: mprotect failed: ",
        std::strerror(errno));
  }
  ++it->second.open;
  return DeviceBlock{it->first, it->second.size, it->second.device};
}

void close_block(const void* base) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = st.blocks.find(static_cast<const char*>(base));
  if (it != st.blocks.end() && it->second.open > 0 &&
      --it->second.open == 0) {
    set_protection(it->first, it->second, PROT_NONE); // never throws
  }
}

// Grows or shrinks a device storage in place, keeping its contents (used by
// resize_/set_ and by UntypedStorage.resize_ through the hooks).
void resize_storage(const c10::Storage& storage, size_t nbytes) {
  auto* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(
      impl->resizable(), "Trying to resize storage that is not resizable");
  auto device =
      impl->device().has_index() ? impl->device().index() : current_device();
  auto previous = current_device();
  set_device(device);
  c10::DataPtr fresh;
  try {
    fresh = device_alloc->allocate(nbytes);
  } catch (...) {
    set_device(previous);
    throw;
  }
  set_device(previous);
  auto keep = std::min(nbytes, impl->nbytes());
  if (keep > 0 && impl->data() != nullptr) {
    auto from = open_block(impl->data());
    auto to = open_block(fresh.get());
    std::memcpy(fresh.get(), impl->data(), keep);
    for (const auto& block : {from, to}) {
      if (block) {
        close_block(block->base);
      }
    }
  }
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(nbytes);
}

} // namespace tpsim
