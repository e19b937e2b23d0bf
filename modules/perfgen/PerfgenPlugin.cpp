// SPDX-License-Identifier: BSD-2-Clause
// The perfgen module's entry point (the descriptor the daemon and the tools load).
#include "modules/perfgen/PerfgenModule.h"

#include <iterator>

EFU_MODULE(efu::perfgen::PerfgenModule, "perfgen", "1.0.0",
           "No input: batches of events walking a test image at a set rate, for testing Kafka "
           "and its consumers",
           efu::perfgen::kPerfgenKeys, static_cast<uint32_t>(std::size(efu::perfgen::kPerfgenKeys)))
