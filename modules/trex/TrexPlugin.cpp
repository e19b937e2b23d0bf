// SPDX-License-Identifier: BSD-2-Clause
// The trex module's entry point (the descriptor the daemon and the tools load).
#include "modules/trex/TrexModule.h"

EFU_MODULE(efu::trex::TrexModule, "trex", "1.0.0",
           "ESS Multi-Grid VMM3 detectors (TREX, LET) from the ESS EFU's files: events built "
           "across datagrams as there, the ESS pixel ids",
           efu::trex::kTrexConfigKeys, static_cast<uint32_t>(efu::trex::kTrexConfigKeyCount))
