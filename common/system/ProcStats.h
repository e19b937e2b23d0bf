// SPDX-License-Identifier: BSD-2-Clause
// Readers of kernel statistics in /proc (UDP counters, this process's memory and descriptors).
#pragma once

#include <cstdint>
#include <string>

namespace efu {

/// The value of one field of the "Udp:" lines of /proc/net/snmp (e.g. "RcvbufErrors",
/// "InDatagrams"), or -1 when the file or the field is missing. `path` is a seam for tests.
int64_t readSnmpUdp(const std::string &field, const std::string &path = "/proc/net/snmp");

/// The integer a /proc file starts with (e.g. /proc/sys/net/core/rmem_max), or -1 if the file
/// cannot be read or does not start with one.
int64_t readProcInteger(const std::string &path);

/// Resident memory of this process in bytes (/proc/self/statm), or -1 if unreadable.
int64_t residentBytes();

/// Open file descriptors of this process (entries of /proc/self/fd), or -1 if unreadable.
int64_t openFileDescriptors();

} // namespace efu
