// SPDX-License-Identifier: BSD-2-Clause
// The caen module's entry point (the descriptor the daemon loads).
#include "modules/caen/CaenModule.h"

EFU_MODULE(efu::caen::CaenModule, "caen", "1.0.0",
           "CAEN charge-division tubes (LoKI, BIFROST, MIRACLES, CSPEC): ESS readouts to pixel "
           "events, one per accepted readout",
           efu::caen::kCaenKeys, static_cast<uint32_t>(efu::caen::kCaenKeyCount))
