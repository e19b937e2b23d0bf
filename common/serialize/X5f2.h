// SPDX-License-Identifier: BSD-2-Clause
// x5f2 (Status) builder: the service heartbeat published with every stats interval.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace efu::serialize {

/// The fixed part of a status message; statusJson is passed per message.
struct StatusInfo {
  std::string softwareName;    ///< e.g. "efu"
  std::string softwareVersion; ///< e.g. "0.1.0"
  std::string serviceId;       ///< e.g. "udp" (the <service> of the topic and counter names)
  std::string hostName;
  uint32_t processId = 0;
  uint32_t updateIntervalMs = 0; ///< ms between two status messages
};

/// Serialises one x5f2 Status into `fbb` (cleared first). The returned bytes (file identifier
/// "x5f2") stay valid until `fbb` is next modified or destroyed. One thread per `fbb`.
std::span<const uint8_t> buildX5f2(flatbuffers::FlatBufferBuilder &fbb, const StatusInfo &info,
                                   std::string_view statusJson);

} // namespace efu::serialize
