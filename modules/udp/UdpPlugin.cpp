// SPDX-License-Identifier: BSD-2-Clause
// The udp module's entry point (the descriptor the daemon loads).
#include "modules/udp/UdpModule.h"

#include <iterator>

EFU_MODULE(efu::udp::UdpModule, "udp", "1.0.0",
           "Throughput and loss measurement: sequence numbers and transmit timestamps from udpgen",
           efu::udp::kUdpKeys, static_cast<uint32_t>(std::size(efu::udp::kUdpKeys)))
