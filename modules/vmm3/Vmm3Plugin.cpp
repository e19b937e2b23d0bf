// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module's entry point (the descriptor the daemon and the tools load).
#include "modules/vmm3/Vmm3Module.h"

EFU_MODULE(efu::vmm3::Vmm3Module, "vmm3", "1.0.0",
           "ESS Multi-Blade VMM3 detectors (FREIA, AMOR, TBLMB, ESTIA) from the ESS EFU's files: "
           "clustering per datagram and cassette, the ESS pixel ids",
           efu::vmm3::kVmm3ConfigKeys, static_cast<uint32_t>(efu::vmm3::kVmm3ConfigKeyCount))
