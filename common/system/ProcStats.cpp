// SPDX-License-Identifier: BSD-2-Clause
// Readers of kernel statistics in /proc (UDP counters).
#include "common/system/ProcStats.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace efu {

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

} // namespace efu
