// SPDX-License-Identifier: BSD-2-Clause
// Pinning threads to CPU cores.
#include "common/system/Affinity.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>

namespace efu {

std::string pinCurrentThread(int cpu) {
  if (cpu < 0) {
    return {};
  }
  if (cpu >= CPU_SETSIZE) {
    return "cannot pin to CPU " + std::to_string(cpu) + ": beyond CPU_SETSIZE";
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<size_t>(cpu), &set);
  // pthread_setaffinity_np returns the error number; it does not set errno.
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    return "cannot pin to CPU " + std::to_string(cpu) + " (this machine offers " +
           std::to_string(availableCpus()) + "): " + std::strerror(rc);
  }
  return {};
}

void nameCurrentThread(const char *name) noexcept {
  char buffer[16];
  std::strncpy(buffer, name, sizeof(buffer) - 1);
  buffer[sizeof(buffer) - 1] = '\0';
  pthread_setname_np(pthread_self(), buffer);
}

int availableCpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return 1;
  }
  return CPU_COUNT(&set);
}

} // namespace efu
