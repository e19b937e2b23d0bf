// SPDX-License-Identifier: BSD-2-Clause
// The dream module's entry point (the descriptor the daemon and the tools load).
#include "modules/dream/DreamModule.h"

EFU_MODULE(efu::dream::DreamModule, "dream", "1.0.0",
           "ESS CDT detectors (DREAM, MAGIC, HEIMDAL) from the ESS EFU's files: one event per "
           "readout with the ESS pixel ids",
           efu::dream::kDreamConfigKeys, static_cast<uint32_t>(efu::dream::kDreamConfigKeyCount))
