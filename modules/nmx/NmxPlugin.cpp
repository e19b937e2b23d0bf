// SPDX-License-Identifier: BSD-2-Clause
// The nmx module's entry point (the descriptor the daemon and the tools load).
#include "modules/nmx/NmxModule.h"

EFU_MODULE(efu::nmx::NmxModule, "nmx", "1.0.0",
           "ESS NMX (VMM3 GEM) from the ESS EFU's files: clustering per datagram and panel, the "
           "ESS uTPC pixel ids",
           efu::nmx::kNmxConfigKeys, static_cast<uint32_t>(efu::nmx::kNmxConfigKeyCount))
