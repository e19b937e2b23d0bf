// SPDX-License-Identifier: BSD-2-Clause
#include "common/net/SendErrors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>

namespace efu {

void SendErrors::count(int err, uint64_t datagrams) noexcept {
  switch (err) {
  case ENOBUFS:
    enobufs += datagrams;
    break;
  case ECONNREFUSED:
    connRefused += datagrams;
    break;
  default:
    other += datagrams;
    lastOtherErrno = err;
    break;
  }
}

std::string SendErrors::text() const {
  return fmt::format("{} (ENOBUFS {}, ECONNREFUSED {}, other {}{}{})", total(), enobufs,
                     connRefused, other, lastOtherErrno != 0 ? ", last: " : "",
                     lastOtherErrno != 0 ? std::strerror(lastOtherErrno) : "");
}

nlohmann::json SendErrors::json() const {
  return {
      {"total", total()}, {"enobufs", enobufs}, {"econnrefused", connRefused}, {"other", other}};
}

} // namespace efu
