// SPDX-License-Identifier: BSD-2-Clause
// The cbm module's entry point (the descriptor the daemon and the tools load).
#include "modules/cbm/CbmModule.h"

EFU_MODULE(efu::cbm::CbmModule, "cbm", "1.0.0",
           "ESS common beam monitors (CBM) from the ESS EFU's files: EVENT_0D and EVENT_2D "
           "monitors as ev44 events per source, integrating monitors (IBM) as da00 histograms "
           "per pulse; BEER's EVENT_2D monitors (\"Detector\": \"BEER\")",
           efu::cbm::kCbmConfigKeys, static_cast<uint32_t>(efu::cbm::kCbmConfigKeyCount))
