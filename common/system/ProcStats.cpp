// SPDX-License-Identifier: BSD-2-Clause
// Readers of kernel statistics in /proc (UDP counters, this process's memory and descriptors).
#include "common/system/ProcStats.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace efu {

int64_t readProcInteger(const std::string &path) {
  std::ifstream in(path);
  int64_t value = -1;
  if (!(in >> value)) {
    return -1;
  }
  return value;
}

int64_t readSnmpUdp(const std::string &field, const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    if (line.rfind("Udp: ", 0) != 0) {
      continue;
    }
    std::istringstream words(line.substr(5));
    std::vector<std::string> items;
    for (std::string word; words >> word;) {
      items.push_back(word);
    }
    if (names.empty()) { // the first Udp: line names the columns, the second holds the values
      names = std::move(items);
      continue;
    }
    for (size_t i = 0; i < names.size() && i < items.size(); ++i) {
      if (names[i] == field) {
        try {
          return std::stoll(items[i]);
        } catch (const std::exception &) {
          return -1;
        }
      }
    }
    return -1;
  }
  return -1;
}

int64_t residentBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t sizePages = 0;
  int64_t residentPages = 0;
  if (!(in >> sizePages >> residentPages)) {
    return -1;
  }
  return residentPages * ::sysconf(_SC_PAGESIZE);
}

int64_t openFileDescriptors() {
  std::error_code ec;
  int64_t count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++count;
  }
  // The iterator's own descriptor is among the entries.
  return ec ? -1 : count - 1;
}

} // namespace efu
