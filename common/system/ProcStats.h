// SPDX-License-Identifier: BSD-2-Clause
// Readers of kernel statistics in /proc (UDP counters).
#pragma once

#include <cstdint>
#include <string>

namespace efu {

/// The value of one field of the "Udp:" lines of /proc/net/snmp (e.g. "RcvbufErrors",
/// "InDatagrams"), or -1 when the file or the field is missing. `path` is a seam for tests.
int64_t readSnmpUdp(const std::string &field, const std::string &path = "/proc/net/snmp");

} // namespace efu
