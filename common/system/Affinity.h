// SPDX-License-Identifier: BSD-2-Clause
// Pinning and scheduling threads, with the error reported instead of ignored.
#pragma once

#include <string>

namespace efu {

/// Pins the calling thread to `cpu`. Returns "" on success, else a message with the errno text.
/// cpu < 0 means "do not pin" and succeeds.
std::string pinCurrentThread(int cpu);

/// Runs the calling thread under SCHED_FIFO at `priority` (1..99). Returns "" on success, else a
/// message saying why and what would permit it. priority 0 means "leave the policy" and succeeds.
std::string setCurrentThreadFifoPriority(int priority);

/// Names the calling thread (visible in top -H, /proc/<pid>/task/<tid>/comm); max 15 chars.
void nameCurrentThread(const char *name) noexcept;

/// Number of CPUs this process may run on.
int availableCpus() noexcept;

} // namespace efu
