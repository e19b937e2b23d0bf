// SPDX-License-Identifier: BSD-2-Clause
// The instrument-file keys that set the two-plane event builders, as the VMM3 families' key
// tables list them (apart from EventBuilder2D.h, which is hot-path code without the SDK).
#pragma once

#include "common/sdk/Module.h"

namespace efu::reduction {

/// The keys of an ESS VMM3 instrument file that set the event builder (EventBuilder2D,
/// StreamingBuilder2D), as the families' key tables list them, with the ESS EFU's defaults.
inline constexpr EfuConfigKey kSplitMultiEventsKey{
    "SplitMultiEvents",
    sdk::ConfigType::Boolean,
    "false",
    "Split an event spanning 10 or more coordinates in a plane into two by charge",
    1,
    0};
inline constexpr EfuConfigKey kSplitLowKey{
    "SplitMultiEventsCoefficientLow",
    sdk::ConfigType::Number,
    "0.8",
    "Split: the lower bound of the charge ratio of two planes' parts that belong together",
    0,
    1e6};
inline constexpr EfuConfigKey kSplitHighKey{"SplitMultiEventsCoefficientHigh",
                                            sdk::ConfigType::Number,
                                            "1.2",
                                            "Split: the upper bound of that ratio",
                                            0,
                                            1e6};
inline constexpr EfuConfigKey kMatchingGapKey{
    "MaxMatchingTimeGap",
    sdk::ConfigType::Integer,
    "500",
    "Clusters (either plane) less than this (ns) after an event's end join the event",
    0,
    65535};
inline constexpr EfuConfigKey kClusteringGapKey{
    "MaxClusteringTimeGap",
    sdk::ConfigType::Integer,
    "500",
    "Hits of a plane less than this (ns) after the previous hit join its cluster",
    0,
    65535};

} // namespace efu::reduction
