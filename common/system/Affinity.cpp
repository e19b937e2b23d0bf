// SPDX-License-Identifier: BSD-2-Clause
// Pinning and scheduling threads.
#include "common/system/Affinity.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
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

std::string setCurrentThreadFifoPriority(int priority) {
  if (priority == 0) {
    return {};
  }
  sched_param param{};
  param.sched_priority = priority;
  const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
  if (rc != 0) {
    std::string text = "cannot run under SCHED_FIFO priority " + std::to_string(priority) + ": " +
                       std::strerror(rc);
    if (rc == EPERM) {
      text += " (needs CAP_SYS_NICE, or an rtprio limit: 'ulimit -r', LimitRTPRIO= in systemd)";
    }
    return text;
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
