// SPDX-License-Identifier: BSD-2-Clause
#include <benchmark/benchmark.h>
BENCHMARK_MAIN();
