// SPDX-License-Identifier: BSD-2-Clause
// The udp module's entry point (the descriptor the daemon loads).
#include "modules/udp/UdpModule.h"

EFU_MODULE(efu::udp::UdpModule, "udp", "1.0.0",
           "Throughput and loss measurement: sequence numbers and transmit timestamps from udpgen",
           EFU_NO_CONFIG_KEYS)
