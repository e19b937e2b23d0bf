// SPDX-License-Identifier: BSD-2-Clause
// Thread pinning and naming: success, the "do not pin" value, and errors reported with text.
#include "common/system/Affinity.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <string>
#include <thread>

namespace efu {
namespace {

/// Runs `f` on a fresh thread so the test runner's own affinity and name stay untouched.
template <typename F> void onThread(F f) {
  std::thread(f).join();
}

TEST(Affinity, AvailableCpusMatchesTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(availableCpus(), CPU_COUNT(&set));
  EXPECT_GE(availableCpus(), 1);
}

TEST(Affinity, NegativeCpuMeansDoNotPin) {
  std::string result = "unset";
  onThread([&] { result = pinCurrentThread(-1); });
  EXPECT_EQ(result, "");
}

TEST(Affinity, PinsToAnAllowedCpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) {
    ++cpu;
  }
  std::string result = "unset";
  int count = -1;
  bool onIt = false;
  onThread([&] {
    result = pinCurrentThread(cpu);
    cpu_set_t now;
    CPU_ZERO(&now);
    pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
    count = CPU_COUNT(&now);
    onIt = CPU_ISSET(cpu, &now);
  });
  EXPECT_EQ(result, "");
  EXPECT_EQ(count, 1);
  EXPECT_TRUE(onIt);
}

TEST(Affinity, CpuBeyondTheMachineReportsTheErrnoText) {
  const int cpu = CPU_SETSIZE - 1; // valid for cpu_set_t, but no such CPU here
  std::string result;
  onThread([&] { result = pinCurrentThread(cpu); });
  EXPECT_NE(result.find("cannot pin to CPU " + std::to_string(cpu)), std::string::npos) << result;
  EXPECT_NE(result.find(std::strerror(EINVAL)), std::string::npos) << result;
  EXPECT_NE(result.find("offers " + std::to_string(availableCpus())), std::string::npos) << result;
}

TEST(Affinity, CpuBeyondCpuSetSizeIsRefused) {
  std::string result;
  onThread([&] { result = pinCurrentThread(CPU_SETSIZE); });
  EXPECT_NE(result.find("CPU_SETSIZE"), std::string::npos) << result;
}

TEST(Affinity, ThreadNameIsTruncatedToFifteenCharacters) {
  char name[32] = {};
  int rc = -1;
  onThread([&] {
    nameCurrentThread("efu-processing-thread");
    rc = pthread_getname_np(pthread_self(), name, sizeof(name));
  });
  ASSERT_EQ(rc, 0);
  EXPECT_STREQ(name, "efu-processing-");
}

} // namespace
} // namespace efu
