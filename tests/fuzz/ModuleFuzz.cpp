// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: one input = one UDP payload handed to a detector module's process(), as the
// daemon does, with the instrument config EFU_FUZZ_CONFIG. Module state carries over from input
// to input (sequences, clusters, pulses), and tick() runs every 64 inputs, so state-dependent
// paths are reached too. Built once per module (fuzz_caen, fuzz_vmm3, fuzz_udp).
#include "tests/fuzz/FuzzSupport.h"

#include <cstddef>
#include <cstdint>

namespace {

efu::fuzz::LoadedModule &instance() {
  static efu::fuzz::LoadedModule *loaded = [] {
    const EfuModuleDescriptor &descriptor = efu::fuzz::loadDescriptor(EFU_FUZZ_MODULE);
    const std::string config = EFU_FUZZ_CONFIG;
    auto *m = new efu::fuzz::LoadedModule(descriptor, efu::loadModuleConfig(descriptor, config));
    if (m->module == nullptr) {
      std::fprintf(stderr, "fuzz: %s refused %s: %s\n", EFU_FUZZ_MODULE, EFU_FUZZ_CONFIG,
                   m->context.error.c_str());
      std::abort();
    }
    return m;
  }();
  return *loaded;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int64_t clockNs = 1'700'000'000'000'000'000;
  static unsigned inputs = 0;
  efu::fuzz::LoadedModule &m = instance();
  clockNs += 1'000'000; // 1 ms per datagram
  const efu::sdk::Packet packet{data,       static_cast<uint32_t>(size),
                                inputs % 2, clockNs,
                                0x7f000001, static_cast<uint16_t>(40000 + inputs % 3)};
  m.module->process(packet);
  if (++inputs % 64 == 0) {
    m.module->tick(clockNs);
  }
  return 0;
}
