// SPDX-License-Identifier: BSD-2-Clause
// The example module's entry point (the descriptor the daemon and the tools load).
#include "modules/example/ExampleModule.h"

#include <iterator>

EFU_MODULE(efu::example::ExampleModule, "example", "1.0.0",
           "Worked example: ESS readouts of (time, x, y) on a grid become pixel events",
           efu::example::kExampleKeys,
           static_cast<uint32_t>(std::size(efu::example::kExampleKeys)))
