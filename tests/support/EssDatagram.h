// SPDX-License-Identifier: BSD-2-Clause
// A test's ESS readout datagram: a version-0 header (detector type, pulse, previous pulse,
// sequence number) followed by readouts of any module, or raw bytes; packet() writes the header
// with the datagram's length. Shared by the module tests.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <vector>

namespace efu::readout::test {

class EssDatagram {
public:
  explicit EssDatagram(uint8_t type, EssTime pulse = {}, EssTime prevPulse = {}, uint32_t seq = 0) {
    fields_.detectorType = type;
    fields_.pulse = pulse;
    fields_.prevPulse = prevPulse;
    fields_.seqNum = seq;
    bytes_.resize(headerBytes(0));
  }
  /// Appends a readout as its bytes (a packed, trivially copyable struct).
  template <class Readout> EssDatagram &add(const Readout &r) {
    static_assert(std::is_trivially_copyable_v<Readout>);
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    bytes_.insert(bytes_.end(), p, p + sizeof(r));
    return *this;
  }
  EssDatagram &raw(std::span<const uint8_t> extra) {
    bytes_.insert(bytes_.end(), extra.begin(), extra.end());
    return *this;
  }
  EssDatagram &raw(std::initializer_list<uint8_t> extra) {
    return raw(std::span(extra.begin(), extra.size()));
  }
  /// The datagram with its header written (total length = its size); valid until the next call.
  [[nodiscard]] sdk::Packet packet() {
    fields_.totalLength = static_cast<uint16_t>(bytes_.size());
    writeHeader(bytes_, fields_);
    return sdk::Packet{bytes_.data(), static_cast<uint32_t>(bytes_.size()), 0, 0};
  }
  [[nodiscard]] size_t size() const { return bytes_.size(); }

private:
  HeaderFields fields_;
  std::vector<uint8_t> bytes_;
};

} // namespace efu::readout::test
