// SPDX-License-Identifier: BSD-2-Clause
#include "efu/DaemonContext.h"

#include "common/system/Printable.h"

namespace efu {

ModulePtr createModule(const std::shared_ptr<ModuleLibrary> &library, DaemonContext &context) {
  sdk::Module *module = library->descriptor().create(&context);
  if (module == nullptr) {
    // The reason may quote the configuration (keys, values): its control bytes are shown, not
    // sent to the terminal or the log.
    throw ModuleRejected(
        "module '" + std::string(library->descriptor().name) + "' failed to start: " +
        (context.error().empty() ? "no reason given" : printable(context.error())));
  }
  return ModulePtr(module, ModuleDeleter{library});
}

} // namespace efu
