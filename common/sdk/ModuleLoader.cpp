// SPDX-License-Identifier: BSD-2-Clause
// Finds, opens and checks detector modules (efu-module-<name>.so) and creates instances.
#include "common/sdk/ModuleLoader.h"


#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <system_error>

#ifndef EFU_BUILD_DIR
#error "EFU_BUILD_DIR must be defined by the build"
#endif
#ifndef EFU_MODULE_DIR_FROM_BINDIR
#error "EFU_MODULE_DIR_FROM_BINDIR must be defined by the build"
#endif

namespace efu {
namespace fs = std::filesystem;

namespace {
constexpr const char *kPrefix = "efu-module-";
constexpr const char *kSuffix = ".so";

std::string joinPaths(const std::vector<fs::path> &dirs) {
  std::string out;
  for (const auto &dir : dirs) {
    out += (out.empty() ? "" : ", ") + dir.string();
  }
  return out;
}
} // namespace

ModuleLibrary::~ModuleLibrary() {
  if (handle_ != nullptr) {
    dlclose(handle_);
  }
}

std::vector<fs::path> moduleSearchPath(const std::vector<std::string> &userDirs) {
  std::vector<fs::path> dirs(userDirs.begin(), userDirs.end());
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Installed: <prefix>/bin/efu finds <prefix>/lib/efu/modules, wherever the prefix is.
    dirs.push_back((exe.parent_path() / EFU_MODULE_DIR_FROM_BINDIR).lexically_normal());
    // Build tree: every program built there (efu, the tools, the tests) finds build/modules.
    // Installed programs are outside it and never look there.
    const fs::path build(EFU_BUILD_DIR);
    const auto [end, unused] = std::mismatch(build.begin(), build.end(), exe.begin(), exe.end());
    if (end == build.end()) {
      dirs.push_back(build / "modules");
    }
  }
  return dirs;
}

std::string moduleFileName(const std::string &name) {
  return kPrefix + name + kSuffix;
}

std::vector<std::string> listModules(const std::vector<fs::path> &dirs) {
  std::set<std::string> names;
  for (const auto &dir : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      if (file.starts_with(kPrefix) && file.ends_with(kSuffix)) {
        names.insert(file.substr(std::char_traits<char>::length(kPrefix),
                                 file.size() - std::char_traits<char>::length(kPrefix) -
                                     std::char_traits<char>::length(kSuffix)));
      }
    }
  }
  return {names.begin(), names.end()};
}

std::string checkDescriptor(const EfuModuleDescriptor &d) {
  // Rebuild per release: the ABI number, the descriptor size and the toolchain must all be efu's
  // own. The C++ classes of Module.h cross the boundary, so there is no "older but compatible".
  const std::string rebuild = "; rebuild the module against this efu's SDK (common/sdk/Module.h)";
  if (d.abiVersion != EFU_MODULE_ABI_VERSION) {
    return "module ABI " + std::to_string(d.abiVersion) + " is not efu's module ABI " +
           std::to_string(EFU_MODULE_ABI_VERSION) + rebuild;
  }
  if (d.structSize != sizeof(EfuModuleDescriptor)) {
    return "module descriptor is " + std::to_string(d.structSize) + " bytes, efu expects " +
           std::to_string(sizeof(EfuModuleDescriptor)) + rebuild;
  }
  if (d.toolchain == nullptr || std::string(d.toolchain) != EFU_TOOLCHAIN_TAG) {
    return std::string("module toolchain '") + (d.toolchain ? d.toolchain : "(none)") +
           "' differs from efu's toolchain '" EFU_TOOLCHAIN_TAG "'" + rebuild +
           " with the same compiler and libraries";
  }
  if (d.name == nullptr || d.create == nullptr || d.destroy == nullptr) {
    return "module descriptor lacks a name, create() or destroy()";
  }
  return {};
}

std::shared_ptr<ModuleLibrary> openModuleFile(const fs::path &file) {
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw ModuleRejected("cannot load module " + file.string() + ": " + dlerror());
  }
  using Entry = const EfuModuleDescriptor *(*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, EFU_MODULE_ENTRY_SYMBOL));
  if (entry == nullptr) {
    dlclose(handle);
    throw ModuleRejected("module " + file.string() +
                         " does not export " EFU_MODULE_ENTRY_SYMBOL
                         "(); it was not built with EFU_MODULE()");
  }
  const EfuModuleDescriptor *descriptor = entry();
  const std::string problem =
      descriptor == nullptr ? "no descriptor" : checkDescriptor(*descriptor);
  if (!problem.empty()) {
    dlclose(handle);
    throw ModuleRejected("refusing module " + file.string() + ": " + problem);
  }
  return std::make_shared<ModuleLibrary>(handle, descriptor, file);
}

namespace {
constexpr InstrumentAlias kInstruments[] = {
    {"loki", "caen", "Detector", "loki"},
    {"bifrost", "caen", "Detector", "bifrost"},
    {"cspec", "caen", "Detector", "cspec"},
    {"miracles", "caen", "Detector", "miracles"},
    {"tbl3he", "caen", "Detector", "tbl3he"},
    {"freia", "vmm3", "InstrumentGeometry", "freia"},
    {"amor", "vmm3", "InstrumentGeometry", "amor"},
    {"tblmb", "vmm3", "InstrumentGeometry", "amor"}, // the ESS TBLMB files use AMOR's geometry
    {"estia", "vmm3", "InstrumentGeometry", "estia"},
    {"let", "trex", "InstrumentGeometry", "let"}, // TREX is the module's own name
    {"magic", "dream", "Detector", "magic"},      // DREAM is the module's own name
    {"heimdal", "dream", "Detector", "heimdal"},
    {"beer", "cbm", "Detector", "beer"}, // BEER's EVENT_2D monitors; CBM is the module's own
    {"odin", "timepix3", "Detector", "timepix3"}, // the ESS file names the camera, not ODIN
};
} // namespace

std::span<const InstrumentAlias> instrumentAliases() {
  return kInstruments;
}

std::string moduleOf(const std::string &name) {
  for (const InstrumentAlias &a : kInstruments) {
    if (name == a.instrument) {
      return a.module;
    }
  }
  return name;
}

void checkInstrument(const std::string &name, const nlohmann::json &config,
                     const std::string &source) {
  const auto alias = std::find_if(std::begin(kInstruments), std::end(kInstruments),
                                  [&](const InstrumentAlias &a) { return name == a.instrument; });
  if (alias == std::end(kInstruments) || !config.is_object() || !config.contains(alias->key) ||
      !config[alias->key].is_string()) {
    return;
  }
  std::string value = config[alias->key].get<std::string>();
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value != alias->value) {
    // The instrument the file is for, when efu serves it.
    const auto other = std::find_if(
        std::begin(kInstruments), std::end(kInstruments), [&](const InstrumentAlias &a) {
          return std::string_view(a.module) == alias->module &&
                 std::string_view(a.key) == alias->key && value == a.value;
        });
    const std::string instead = other == std::end(kInstruments)
                                    ? "the instrument's own name"
                                    : "-d " + std::string(other->instrument);
    throw sdk::ConfigError(source + ": " + alias->key + " = " + config[alias->key].dump() +
                           ": -d " + name + " serves " + name + "; use -d " + alias->module +
                           " (or " + instead + ") for this file");
  }
}

std::string defaultSourceName(const EfuModuleDescriptor &descriptor, const nlohmann::json &config,
                              const std::string &configSource, const std::string &instrument) {
  if (descriptor.sourceName == nullptr) {
    return instrument;
  }
  std::string name;
  std::string error;
  if (!descriptor.sourceName(&config, configSource.c_str(), &name, &error)) {
    throw sdk::ConfigError(error);
  }
  return name.empty() ? instrument : name;
}

std::string describeModules(const std::vector<fs::path> &dirs) {
  std::string out;
  for (const std::string &module : listModules(dirs)) {
    std::string instruments;
    for (const InstrumentAlias &a : kInstruments) {
      if (module == a.module) {
        instruments.append(instruments.empty() ? "" : " ").append(a.instrument);
      }
    }
    out.append(module);
    if (!instruments.empty()) {
      out.append("  (ESS instruments: ").append(instruments).append(")");
    }
    out.append("\n");
  }
  return out.empty() ? "no modules found in " + joinPaths(dirs) + "\n" : out;
}

std::shared_ptr<ModuleLibrary> loadModule(const std::string &name,
                                          const std::vector<fs::path> &dirs) {
  const std::string fileName = moduleFileName(moduleOf(name));
  for (const auto &dir : dirs) {
    std::error_code ec;
    const fs::path candidate = dir / fileName;
    if (fs::is_regular_file(candidate, ec)) {
      return openModuleFile(candidate);
    }
  }
  const auto found = listModules(dirs);
  std::string available;
  for (const auto &module : found) {
    available += (available.empty() ? "" : ", ") + module;
  }
  std::string instruments;
  for (const InstrumentAlias &a : kInstruments) {
    instruments.append(instruments.empty() ? "" : ", ").append(a.instrument);
  }
  throw ModuleNotFound("unknown module '" + name + "': no " + fileName + " in " + joinPaths(dirs) +
                       ". Available modules: " + (available.empty() ? "(none)" : available) +
                       "; instruments: " + instruments +
                       ". Use --module-path DIR to add a directory.");
}

} // namespace efu
