// SPDX-License-Identifier: BSD-2-Clause
// The timepix3 module's entry point (the descriptor the daemon and the tools load).
#include "modules/timepix3/Timepix3Module.h"

EFU_MODULE(efu::timepix3::Timepix3Module, "timepix3", "1.0.0",
           "ODIN's Timepix3 camera (ESS EFU timepix3): EVR/TDC timing, pixel hits clustered per "
           "datagram into events on a scaled-up image",
           efu::timepix3::kTimepix3ConfigKeys,
           static_cast<uint32_t>(efu::timepix3::kTimepix3ConfigKeyCount))
