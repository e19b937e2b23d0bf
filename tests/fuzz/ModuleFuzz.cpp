// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: one input = one UDP payload handed to a detector module's process(), as the
// daemon does, with the instrument config EFU_FUZZ_CONFIG. Module state carries over from input
// to input (sequences, clusters, pulses), and tick() runs every 64 inputs, so state-dependent
// paths are reached too. Built once per module (fuzz_caen, fuzz_vmm3, fuzz_cbm, fuzz_timepix3,
// fuzz_udp, ...). With several configs (EFU_FUZZ_CONFIG "a.json,b.json", caen's ESS
// instruments), one instance each, and the input's first byte picks the instance the rest goes
// to.
#include "tests/fuzz/FuzzSupport.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include <algorithm>

namespace {

std::vector<efu::fuzz::LoadedModule *> &instances() {
  // Never destroyed (as the instances are): a static vector's destructor at exit would leave
  // them unreachable, and LeakSanitizer would report them.
  static auto *loaded = new std::vector<efu::fuzz::LoadedModule *>([] {
    const EfuModuleDescriptor &descriptor = efu::fuzz::loadDescriptor(EFU_FUZZ_MODULE);
    std::vector<efu::fuzz::LoadedModule *> out;
    const std::string configs = EFU_FUZZ_CONFIG;
    size_t begin = 0;
    do {
      const size_t end = std::min(configs.find(',', begin), configs.size());
      const std::string config = configs.substr(begin, end - begin);
      auto *m = new efu::fuzz::LoadedModule(descriptor, efu::loadModuleConfig(descriptor, config));
      if (m->module == nullptr) {
        std::fprintf(stderr, "fuzz: %s refused %s: %s\n", EFU_FUZZ_MODULE, config.c_str(),
                     m->context.error.c_str());
        std::abort();
      }
      out.push_back(m);
      begin = end + 1;
    } while (begin <= configs.size());
    return out;
  }());
  return *loaded;
}

/// One datagram to one instance, as the daemon hands it over.
void process(efu::fuzz::LoadedModule &m, const uint8_t *data, size_t size) {
  static int64_t clockNs = 1'700'000'000'000'000'000;
  static unsigned inputs = 0;
  clockNs += 1'000'000; // 1 ms per datagram
  const efu::sdk::Packet packet{data,       static_cast<uint32_t>(size),
                                inputs % 2, clockNs,
                                0x7f000001, static_cast<uint16_t>(40000 + inputs % 3)};
  m.module->process(packet);
  if (++inputs % 64 == 0) {
    m.module->tick(clockNs);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto &all = instances();
  if (all.size() == 1) {
    process(*all.front(), data, size);
  } else if (size > 0) {
    process(*all[data[0] % all.size()], data + 1, size - 1);
  }
  return 0;
}
