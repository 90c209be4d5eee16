// The stream check: vector clocks, as CUDA's stream sanitizer keeps them
// (torch/cuda/_sanitizer.py). Every host access to a device block is one
// step of the accessing device's current stream; a stream's clock says how
// far it has waited for every other stream. An access is refused when the
// block's last write (or, for a write, a read) was made on another stream
// that the current one has not waited for: on a GPU it could see stale data.
#include "sim.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tpsim {
namespace {

using Key = int64_t; // device << 48 | stream id
using Clock = std::unordered_map<Key, uint64_t>;

struct Use {
  Key stream;
  uint64_t step;
};

struct Uses {
  std::optional<Use> write;
  std::vector<Use> reads; // the last read of each stream since the write
};

struct State {
  std::mutex mutex;
  uint64_t step = 0;
  Clock host; // what a stream made now has waited for
  std::unordered_map<Key, Clock> streams;
  std::unordered_map<const void*, Clock> events;
  std::unordered_map<const void*, Uses> blocks;
};

State& state() {
  static auto* s = new State(); // leaked: blocks are freed during exit
  return *s;
}

bool enabled() {
  static const bool on = [] {
    const char* env = std::getenv("TORCHPORT_SIM_STREAM_CHECK");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return on;
}

Key key_of(c10::DeviceIndex device, c10::StreamId id) {
  return (static_cast<Key>(device) << 48) | id;
}

Key key_of(const c10::Stream& stream) {
  return key_of(stream.device_index(), stream.id());
}

std::string name_of(Key key) {
  auto id = key & ((Key(1) << 48) - 1);
  auto device = std::to_string(key >> 48);
  return id == 0 ? "the default stream of tpsim:" + device
                 : "stream " + std::to_string(id) + " of tpsim:" + device;
}

Clock& clock_of(State& st, Key key) {
  auto it = st.streams.find(key);
  if (it == st.streams.end()) {
    it = st.streams.emplace(key, st.host).first;
  }
  return it->second;
}

void merge(Clock& into, const Clock& from) {
  for (const auto& [key, step] : from) {
    auto& mine = into[key];
    mine = std::max(mine, step);
  }
}

void everyone_waits_for(State& st, const Clock& clock) {
  merge(st.host, clock);
  for (auto& entry : st.streams) {
    merge(entry.second, clock);
  }
}

[[noreturn]] void refuse(
    const DeviceBlock& block, bool write, Key current, Use earlier, bool
    earlier_wrote) {
  TORCH_CHECK(
      false,
      "tpsim stream check: a tensor's memory on tpsim:",
      static_cast<int>(block.device),
      " (",
      block.size,
      " bytes) is ",
      write ? "written" : "read",
      " on ",
      name_of(current),
      ", but it was ",
      earlier_wrote ? "written" : "read",
      " on ",
      name_of(earlier.stream),
      ", which ",
      name_of(current),
      " has not waited for: on a GPU this ",
      write ? "may overwrite data still in use" : "may read data not yet written",
      ". Wait first (current.wait_stream(side), or side.record_event() and "
      "current.wait_event(event)) or synchronize; CUDA's stream sanitizer "
      "(TORCH_CUDA_SANITIZER=1) reports the same race. "
      "TORCHPORT_SIM_STREAM_CHECK=0 turns this check off.");
}

} // namespace

void check_access(const DeviceBlock& block, bool write) {
  if (!enabled()) {
    return;
  }
  auto current = key_of(block.device, current_stream_id(block.device));
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto& clock = clock_of(st, current);
  auto ordered = [&](const Use& use) {
    if (use.stream == current) {
      return true;
    }
    auto it = clock.find(use.stream);
    return it != clock.end() && it->second >= use.step;
  };
  auto& uses = st.blocks[block.base];
  if (uses.write && !ordered(*uses.write)) {
    refuse(block, write, current, *uses.write, true);
  }
  auto step = ++st.step;
  clock[current] = step;
  if (write) {
    for (const auto& read : uses.reads) {
      if (!ordered(read)) {
        refuse(block, write, current, read, false);
      }
    }
    uses.write = Use{current, step};
    uses.reads.clear();
    return;
  }
  for (auto& read : uses.reads) {
    if (read.stream == current) {
      read.step = step;
      return;
    }
  }
  uses.reads.push_back(Use{current, step});
}

void forget_block(const void* base) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.blocks.erase(base);
}

void event_recorded(const void* event, const c10::Stream& stream) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.events[event] = clock_of(st, key_of(stream));
}

void stream_waits_event(const void* event, const c10::Stream& stream) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = st.events.find(event);
  if (it != st.events.end()) {
    merge(clock_of(st, key_of(stream)), it->second);
  }
}

void host_waits_event(const void* event) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = st.events.find(event);
  if (it != st.events.end()) {
    auto clock = it->second;
    everyone_waits_for(st, clock);
  }
}

void host_waits_stream(const c10::Stream& stream) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto clock = clock_of(st, key_of(stream));
  everyone_waits_for(st, clock);
}

void host_waits_device(c10::DeviceIndex index) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  Clock all;
  for (const auto& [key, clock] : st.streams) {
    if (index < 0 || (key >> 48) == index) {
      merge(all, clock);
    }
  }
  everyone_waits_for(st, all);
}

void event_destroyed(const void* event) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.events.erase(event);
}

} // namespace tpsim
