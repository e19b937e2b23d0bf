// SPDX-License-Identifier: BSD-2-Clause
// Finds, opens and checks detector modules (efu-module-<name>.so): the daemon, readoutgen and
// efu-dump share it. Instances are created by the daemon (efu/DaemonContext.h, createModule).
#pragma once

#include "common/sdk/Module.h"

#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu {

/// No module of that name on the search path; the message lists what was found and where.
class ModuleNotFound : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
/// The file is not a usable module: dlopen failed, no entry symbol, ABI or toolchain mismatch.
class ModuleRejected : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An open module library. Closed (dlclose) when the last reference goes, which instances hold.
class ModuleLibrary {
public:
  ModuleLibrary(void *handle, const EfuModuleDescriptor *descriptor, std::filesystem::path path)
      : handle_(handle), descriptor_(descriptor), path_(std::move(path)) {}
  ~ModuleLibrary();
  ModuleLibrary(const ModuleLibrary &) = delete;
  ModuleLibrary &operator=(const ModuleLibrary &) = delete;

  [[nodiscard]] const EfuModuleDescriptor &descriptor() const noexcept { return *descriptor_; }
  [[nodiscard]] const std::filesystem::path &path() const noexcept { return path_; }

private:
  void *handle_;
  const EfuModuleDescriptor *descriptor_;
  std::filesystem::path path_;
};

/// Deleter that destroys the instance through the module's own destroy() and keeps the library
/// open until then.
struct ModuleDeleter {
  std::shared_ptr<ModuleLibrary> library;
  void operator()(sdk::Module *module) const noexcept {
    if (module != nullptr) {
      library->descriptor().destroy(module);
    }
  }
};
using ModulePtr = std::unique_ptr<sdk::Module, ModuleDeleter>;

/// The directories searched, in order: `userDirs` (--module-path), the install dir relative to
/// the running executable (<prefix>/bin/efu: <prefix>/lib/efu/modules), then the build tree
/// (build/efu/efu: build/modules).
std::vector<std::filesystem::path> moduleSearchPath(const std::vector<std::string> &userDirs);

/// The file name of module `name`: efu-module-<name>.so.
std::string moduleFileName(const std::string &name);

/// Names of all modules found in `dirs` (first occurrence wins), sorted.
std::vector<std::string> listModules(const std::vector<std::filesystem::path> &dirs);

/// An ESS instrument name that selects a module: `efu -d loki` loads caen and expects the
/// configuration's "Detector" to say loki (docs/modules.md, Instruments).
struct InstrumentAlias {
  const char *instrument;
  const char *module;
  /// The ESS file's key that names the instrument's geometry, and the value it must have
  /// (compared ignoring case): "Detector" for the CAEN files; "InstrumentGeometry" for the
  /// Multi-Blade ones, which all say "Detector": "Freia".
  const char *key;
  const char *value;
};
/// Every instrument efu serves, by the module that serves it.
std::span<const InstrumentAlias> instrumentAliases();
/// The module `name` selects: itself, or the module of the instrument it names.
std::string moduleOf(const std::string &name);
/// When `name` is an instrument, refuses a configuration whose key (InstrumentAlias::key) names
/// another one (sdk::ConfigError naming `source`, the key and both names).
void checkInstrument(const std::string &name, const nlohmann::json &config,
                     const std::string &source);
/// The ev44 source_name of the module's default events when --source-name gives none: what the
/// module declares for this configuration (its `sourceName()`, the ESS EFU's name), else
/// `instrument`. The one place that decides it (docs/kafka.md, Source names). Throws
/// sdk::ConfigError with the module's reason when it refuses the configuration.
std::string defaultSourceName(const EfuModuleDescriptor &descriptor, const nlohmann::json &config,
                              const std::string &configSource, const std::string &instrument);
/// What `efu -d list` prints: the modules found in `dirs`, each with the instruments it serves.
std::string describeModules(const std::vector<std::filesystem::path> &dirs);

/// Opens module `name` (a module or an instrument name) from the first directory that has it
/// and checks its descriptor. Throws ModuleNotFound or ModuleRejected with a message a user can
/// act on.
std::shared_ptr<ModuleLibrary> loadModule(const std::string &name,
                                          const std::vector<std::filesystem::path> &dirs);

/// Opens one file as a module (no search). Throws ModuleRejected.
std::shared_ptr<ModuleLibrary> openModuleFile(const std::filesystem::path &file);

/// Checks a descriptor against this daemon's ABI and toolchain. Returns "" if acceptable,
/// else the reason (naming both sides and how to rebuild).
std::string checkDescriptor(const EfuModuleDescriptor &descriptor);

} // namespace efu
