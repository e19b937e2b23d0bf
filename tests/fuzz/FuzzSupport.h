// SPDX-License-Identifier: BSD-2-Clause
// Shared by the libFuzzer targets: loading a detector module as the daemon does (dlopen + the
// descriptor), with a test context whose sink only counts events.
#pragma once

#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "tests/support/FakeModuleContext.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace efu::fuzz {

/// The descriptor of the module at `path`; aborts with a message if it cannot be loaded (a
/// broken build, not a finding).
inline const EfuModuleDescriptor &loadDescriptor(const char *path) {
  void *handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "fuzz: cannot load %s: %s\n", path, ::dlerror());
    std::abort();
  }
  using Entry = const EfuModuleDescriptor *(*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, EFU_MODULE_ENTRY_SYMBOL));
  if (entry == nullptr || entry() == nullptr) {
    std::fprintf(stderr, "fuzz: %s has no module descriptor\n", path);
    std::abort();
  }
  return *entry();
}

/// A module instance with its context; the sink counts events without keeping them, so a long
/// fuzzing run does not grow.
struct LoadedModule {
  LoadedModule(const EfuModuleDescriptor &d, nlohmann::json config)
      : descriptor(d), context(std::move(config), "fuzz") {
    context.sink.keep = false;
    module = descriptor.create(&context);
    for (auto &[name, sink] : context.sources) { // the sources the module registered
      sink.keep = false;
    }
  }
  ~LoadedModule() {
    if (module != nullptr) {
      descriptor.destroy(module);
    }
  }
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;

  const EfuModuleDescriptor &descriptor;
  readout::FakeModuleContext context;
  sdk::Module *module = nullptr;
};

} // namespace efu::fuzz
