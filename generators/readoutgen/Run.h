// SPDX-License-Identifier: BSD-2-Clause
// One readoutgen run: the instrument file, the source, the sinks, progress and the summary.
#pragma once

#include "generators/readoutgen/ReadoutgenOptions.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>

namespace efu::readoutgen {

/// An ESS instrument file's limit on pulse − previous pulse, which the headers keep to:
/// MaxPulseTimeNS when it is an integer, else MaxPulseTimeDiffNS (its CBM and CDT name) when it
/// is an unsigned integer, read modulo 2^32 as the ESS EFU reads it; nullopt when neither is.
[[nodiscard]] std::optional<int64_t> maxPulseGapNs(const nlohmann::json &config);

/// Sends datagrams to the options' address until the count, the duration or a stop signal;
/// writes --truth and --pcap-out, logs progress, prints the summary (stderr, and --json on
/// stdout). Throws on a bad file, option or socket (the message names it).
void run(ReadoutgenOptions options);

} // namespace efu::readoutgen
