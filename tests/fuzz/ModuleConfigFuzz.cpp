// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: one input = the text of a --config file. It is read as efu reads one
// (bounded-depth JSON), validated against the key tables of the caen and vmm3 modules, and where
// valid the module is constructed (geometry checks) and destroyed. Errors must be exceptions
// (sdk::ConfigError, or a module's setError()), never a crash.
#include "common/system/BoundedJson.h"
#include "tests/fuzz/FuzzSupport.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::array<const EfuModuleDescriptor *, 2> descriptors{
      &efu::fuzz::loadDescriptor(EFU_FUZZ_CAEN_MODULE),
      &efu::fuzz::loadDescriptor(EFU_FUZZ_VMM3_MODULE)};
  nlohmann::json parsed;
  try {
    parsed = efu::parseJson(std::string_view(reinterpret_cast<const char *>(data), size));
  } catch (const nlohmann::json::exception &) {
    return 0; // not JSON, or nested too deep: efu reports it and stops
  } catch (const std::exception &) {
    return 0;
  }
  for (const EfuModuleDescriptor *descriptor : descriptors) {
    nlohmann::json config;
    try {
      config = efu::validateModuleConfig(*descriptor, parsed, "fuzz.json");
    } catch (const efu::sdk::ConfigError &) {
      continue;
    }
    efu::fuzz::LoadedModule module(*descriptor, std::move(config));
    (void)module;
  }
  return 0;
}
