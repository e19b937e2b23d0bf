// SPDX-License-Identifier: BSD-2-Clause
// The caen module's entry point (the descriptor the daemon loads).
#include "modules/caen/CaenModule.h"

EFU_MODULE(efu::caen::CaenModule, "caen", "1.0.0",
           "CAEN charge-division straws (LoKI) from the ESS EFU's instrument and calibration "
           "files: ESS readouts to the ESS pixel ids, one event per accepted readout",
           efu::caen::kCaenKeys, static_cast<uint32_t>(efu::caen::kCaenKeyCount))
