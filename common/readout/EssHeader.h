// SPDX-License-Identifier: BSD-2-Clause
// ESS readout header (docs/wire-formats.md §2): packed layout, tick/ns conversion, validation, writer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace efu::readout {

/// The ESS timing system's clock: 88.0525 MHz.
constexpr int64_t kTicksPerSecond = 88'052'500;
/// Largest legal "low" (fraction) field of a time: kTicksPerSecond - 1.
constexpr uint32_t kMaxTicksLow = 88'052'499;
/// Output queues are numbered 0..kOutputQueues-1; sequence numbers are per queue.
constexpr uint8_t kOutputQueues = 12;
/// 'E' 'S' 'S' as the low three bytes of a little-endian u32 at offset 2.
constexpr uint32_t kCookie = 0x535345;
/// Largest readout datagram we generate by default (jumbo frame payload).
constexpr size_t kMaxDatagramBytes = 8972;

constexpr uint8_t kTypeLoki = 0x30;
constexpr uint8_t kTypeTbl3he = 0x32;
constexpr uint8_t kTypeBifrost = 0x34;
constexpr uint8_t kTypeMiracles = 0x38;
constexpr uint8_t kTypeCspec = 0x3C;
constexpr uint8_t kTypeTrex = 0x40;
constexpr uint8_t kTypeNmx = 0x44;
constexpr uint8_t kTypeFreia = 0x48;
constexpr uint8_t kTypeTblmb = 0x49;
constexpr uint8_t kTypeEstia = 0x4C;
constexpr uint8_t kTypeCbm = 0x10;
constexpr uint8_t kTypeBeer = 0x50; ///< BEER: the CBM readout, EVENT_2D monitors only
constexpr uint8_t kTypeDream = 0x60;
constexpr uint8_t kTypeMagic = 0x64;
constexpr uint8_t kTypeHeimdal = 0x68;

#pragma pack(push, 1)
/// Version 0 header (30 bytes). All fields little-endian (host order on x86/arm64).
struct EssHeaderV0 {
  uint8_t padding;       ///< must be 0
  uint8_t version;       ///< 0 or 1
  uint8_t cookie[3];     ///< 'E' 'S' 'S'
  uint8_t detectorType;  ///< e.g. kTypeLoki
  uint16_t totalLength;  ///< bytes of the whole datagram, header included
  uint8_t outputQueue;   ///< < kOutputQueues
  uint8_t timeSource;    ///< bit field, not interpreted
  uint32_t pulseHigh;    ///< seconds since the Unix epoch
  uint32_t pulseLow;     ///< ticks, <= kMaxTicksLow
  uint32_t prevPulseHigh;
  uint32_t prevPulseLow;
  uint32_t seqNum;       ///< +1 per datagram per output queue
};
/// Version 1 header (32 bytes): version 0 plus two bytes of CMAC padding.
struct EssHeaderV1 {
  EssHeaderV0 v0;
  uint16_t cmacPadding;
};
/// The four bytes that start every data block (readout) after the header.
struct DataBlockHeader {
  uint8_t fiber;    ///< <= kMaxFiber
  uint8_t fen;      ///< <= kMaxFen
  uint16_t length;  ///< bytes of this readout, these four included
};
#pragma pack(pop)
static_assert(sizeof(EssHeaderV0) == 30, "ESS header v0 is 30 bytes");
static_assert(sizeof(EssHeaderV1) == 32, "ESS header v1 is 32 bytes");
static_assert(sizeof(DataBlockHeader) == 4, "data block header is 4 bytes");

constexpr uint8_t kMaxFiber = 23;
constexpr uint8_t kMaxFen = 23;

/// Header size for a version (0 → 30, 1 → 32); 0 for an unknown version.
constexpr size_t headerBytes(uint8_t version) noexcept {
  return version == 0 ? sizeof(EssHeaderV0) : version == 1 ? sizeof(EssHeaderV1) : 0;
}

/// ns of one 88.0525 MHz tick, as a double (11.3568...).
constexpr double kTickNs = 1e9 / static_cast<double>(kTicksPerSecond);

/// An ESS time (seconds, 88.0525 MHz ticks) in ns since the epoch, as the ESS EFU converts it:
/// high * 1e9 + the product low x kTickNs in double precision, TRUNCATED. Every ESS time in
/// efu (pulse times, readout times, times of flight) goes through this, so that efu's ns are
/// the ESS EFU's to the nanosecond. For low <= kMaxTicksLow the fraction stays below a second;
/// ticks are 11.36 ns apart, so distinct ticks map to distinct ns.
constexpr int64_t ticksToNs(uint32_t high, uint32_t low) noexcept {
  return static_cast<int64_t>(high) * 1'000'000'000 +
         static_cast<int64_t>(static_cast<double>(low) * kTickNs);
}

/// An ESS time as (seconds, ticks).
struct EssTime {
  uint32_t high = 0;
  uint32_t low = 0;
  friend constexpr bool operator==(const EssTime &, const EssTime &) = default;
};

/// The nearest tick to a time in ns (ties up; a fraction rounding to a full second carries).
/// ticksToNs(nsToTicks(t)) is within half a tick and a ns of t, and nsToTicks(ticksToNs(x)) == x
/// for every valid x.
constexpr EssTime nsToTicks(int64_t ns) noexcept {
  int64_t sec = ns / 1'000'000'000;
  const int64_t fracNs = ns % 1'000'000'000;
  int64_t ticks = (fracNs * kTicksPerSecond + 500'000'000) / 1'000'000'000;
  if (ticks >= kTicksPerSecond) {
    ticks -= kTicksPerSecond;
    ++sec;
  }
  return EssTime{static_cast<uint32_t>(sec), static_cast<uint32_t>(ticks)};
}

/// The time the ESS EFU measures an event's time of flight from: an event time in ns converted
/// to an ESS time (the nearest tick) and back with ticksToNs. The ESS EFU rounds the double
/// frac / kTickNs half away from zero. The exact quotient is frac x 35221 / 400000 (88 052 500
/// / 1e9 in lowest terms), and the double is within 2e-8 of it, while every fraction of the
/// exact quotient other than 0 and 1/2 lies at least 1/400000 = 2.5e-6 from both: rounding the
/// exact quotient in integers gives the same tick without a division. At fractions 0 and 1/2
/// (2 frac values in 400000) the double decides, as the ESS EFU computes it.
constexpr int64_t eventTimeNs(uint64_t ns) noexcept {
  const uint64_t high = ns / 1'000'000'000;
  const uint64_t frac = ns - high * 1'000'000'000;
  const uint64_t scaled = frac * 35'221;
  const uint64_t rest = scaled % 400'000;
  auto low = static_cast<uint32_t>(scaled / 400'000);
  if (rest != 0 && rest != 200'000) [[likely]] {
    low += rest > 200'000 ? 1U : 0U;
  } else {
    // std::round without the libm call (the fraction of a non-negative double below 2^52 is
    // exact).
    const double ticks = static_cast<double>(frac) / kTickNs;
    low = static_cast<uint32_t>(ticks);
    low += ticks - low >= 0.5 ? 1U : 0U;
  }
  return ticksToNs(static_cast<uint32_t>(high), low);
}

/// Bits of the header's time-source byte, as the readout master sets them.
namespace timesource {
constexpr uint8_t kTimingSystemTime = 1U << 0; ///< pulse times from the timing system (else local)
constexpr uint8_t kTimingSystemSync = 1U << 1; ///< synchronised to the timing system
constexpr uint8_t kLocalSync = 1U << 2;        ///< synchronised locally
constexpr uint8_t kTimingStatus = 1U << 3;     ///< the timing receiver reports an error
constexpr uint8_t kEvenFibreStatus = 1U << 4;
constexpr uint8_t kEvenFibreSyncLost = 1U << 5; ///< the even fibre lost synchronisation
constexpr uint8_t kOddFibreStatus = 1U << 6;
constexpr uint8_t kOddFibreSyncLost = 1U << 7; ///< the odd fibre lost synchronisation
} // namespace timesource

/// Why a header was refused (or Ok): validateHeader() returns the first rule a header breaks.
/// One counter per value except Ok; what a refusal counts is EssReadoutParser's (time-source
/// faults each, a previous-pulse fraction also as timefrac: the ESS EFU's counts).
enum class HeaderError : uint8_t {
  Ok = 0,
  TooShort,        ///< shorter than the header its version needs (or than 30 bytes)
  Padding,         ///< byte 0 not zero
  Version,         ///< version not 0 or 1
  Cookie,          ///< not "ESS"
  DetectorType,    ///< type not accepted by the module
  Length,          ///< total length != datagram size
  OutputQueue,     ///< output queue >= 12
  Timing,          ///< time source byte: local time, but synchronised to the timing system
  TimeStatus,      ///< time source byte: local time, and the timing-status error bit set
  EvenFibreSync,   ///< time source byte: the even fibre lost synchronisation
  OddFibreSync,    ///< time source byte: the odd fibre lost synchronisation
  PulseFraction,   ///< pulse time low > 88 052 499
  PrevFraction,    ///< previous pulse time low > 88 052 499 (counted in timefrac too)
  PulseGap,        ///< previous pulse earlier than the pulse by more than the maximum
  Count_
};

/// Stable lowercase name of an error kind: the last part of parser.essheader.errors.<kind>, the
/// ESS EFU's names where it has the same check (prev_timefrac is efu's: the ESS EFU counts that
/// check under timefrac, and so does efu, with prev_timefrac beside it).
constexpr const char *headerErrorName(HeaderError e) noexcept {
  switch (e) {
  case HeaderError::Ok: return "ok";
  case HeaderError::TooShort: return "buffer";
  case HeaderError::Padding: return "pad";
  case HeaderError::Version: return "version";
  case HeaderError::Cookie: return "cookie";
  case HeaderError::DetectorType: return "type";
  case HeaderError::Length: return "size";
  case HeaderError::OutputQueue: return "output_queue";
  case HeaderError::Timing: return "timing";
  case HeaderError::TimeStatus: return "time_status";
  case HeaderError::EvenFibreSync: return "even_fibre_sync";
  case HeaderError::OddFibreSync: return "odd_fibre_sync";
  case HeaderError::PulseFraction: return "timefrac";
  case HeaderError::PrevFraction: return "prev_timefrac";
  case HeaderError::PulseGap: return "timehigh";
  case HeaderError::Count_: break;
  }
  return "?";
}

/// True when time-source byte `ts` has fault `kind` (one of Timing, TimeStatus, EvenFibreSync,
/// OddFibreSync; false for any other kind). A byte may have several: the ESS EFU counts each
/// (its Parser::validate checks all four before it refuses the datagram).
constexpr bool hasTimeSourceFault(uint8_t ts, HeaderError kind) noexcept {
  const bool localTime = (ts & timesource::kTimingSystemTime) == 0;
  switch (kind) {
  case HeaderError::Timing: return localTime && (ts & timesource::kTimingSystemSync) != 0;
  case HeaderError::TimeStatus: return localTime && (ts & timesource::kTimingStatus) != 0;
  case HeaderError::EvenFibreSync: return (ts & timesource::kEvenFibreSyncLost) != 0;
  case HeaderError::OddFibreSync: return (ts & timesource::kOddFibreSyncLost) != 0;
  default: return false;
  }
}

/// The time-source faults, in the order they are checked.
inline constexpr HeaderError kTimeSourceFaults[] = {HeaderError::Timing, HeaderError::TimeStatus,
                                                    HeaderError::EvenFibreSync,
                                                    HeaderError::OddFibreSync};

/// Set of detector types a module accepts (256-bit mask).
class DetectorTypes {
public:
  constexpr DetectorTypes() = default;
  constexpr DetectorTypes(std::initializer_list<uint8_t> types) noexcept {
    for (uint8_t t : types) {
      add(t);
    }
  }
  constexpr void add(uint8_t type) noexcept { bits_[type >> 6] |= uint64_t{1} << (type & 63); }
  [[nodiscard]] constexpr bool contains(uint8_t type) const noexcept {
    return (bits_[type >> 6] >> (type & 63)) & 1U;
  }

private:
  std::array<uint64_t, 4> bits_{};
};

/// A validated header, decoded. `payload` points just after the header, inside the datagram.
struct EssHeader {
  uint8_t version = 0;
  uint8_t detectorType = 0;
  uint8_t outputQueue = 0;
  uint8_t timeSource = 0;
  uint32_t seqNum = 0;
  EssTime pulse;
  EssTime prevPulse;
  int64_t pulseTimeNs = 0;      ///< ticksToNs(pulse)
  int64_t prevPulseTimeNs = 0;  ///< ticksToNs(prevPulse)
  const uint8_t *payload = nullptr;
  size_t payloadBytes = 0;      ///< 0 = heartbeat
};

/// No limit on the gap between the previous pulse and the pulse.
constexpr int64_t kNoPulseGapLimit = INT64_MAX;

/// Checks every rule of docs/wire-formats.md §2 in the order of the HeaderError enum and fills `out`
/// when the result is Ok. `maxPulseGapNs`: the largest pulse − previous pulse accepted (the ESS
/// instrument files' MaxPulseTimeNS). The gap is signed, as in the ESS EFU: a previous pulse
/// later than the pulse passes (out.prevPulseTimeNs > out.pulseTimeNs; EssReadoutParser counts
/// it). Pure: no counters, no state. Hot path.
inline HeaderError validateHeader(const uint8_t *data, size_t size, const DetectorTypes &accepted,
                                  EssHeader &out,
                                  int64_t maxPulseGapNs = kNoPulseGapLimit) noexcept {
  if (size < sizeof(EssHeaderV0)) {
    return HeaderError::TooShort;
  }
  EssHeaderV0 h;
  std::memcpy(&h, data, sizeof(h));
  if (h.padding != 0) {
    return HeaderError::Padding;
  }
  const size_t hdrBytes = headerBytes(h.version);
  if (hdrBytes == 0) {
    return HeaderError::Version;
  }
  if (size < hdrBytes) {
    return HeaderError::TooShort;
  }
  if (h.cookie[0] != 'E' || h.cookie[1] != 'S' || h.cookie[2] != 'S') {
    return HeaderError::Cookie;
  }
  if (!accepted.contains(h.detectorType)) {
    return HeaderError::DetectorType;
  }
  if (h.totalLength != size) {
    return HeaderError::Length;
  }
  if (h.outputQueue >= kOutputQueues) {
    return HeaderError::OutputQueue;
  }
  // Time-source faults make the pulse times untrustworthy: the datagram is refused, as the ESS
  // EFU does, under the first fault (the parser counts every fault of the byte).
  // One test for all four on the way of a good header: the fibre bits always, the sync and
  // status bits with local time.
  constexpr uint8_t kFibreFaults = timesource::kEvenFibreSyncLost | timesource::kOddFibreSyncLost;
  constexpr uint8_t kLocalFaults =
      kFibreFaults | timesource::kTimingSystemSync | timesource::kTimingStatus;
  const uint8_t faults =
      (h.timeSource & timesource::kTimingSystemTime) != 0 ? kFibreFaults : kLocalFaults;
  if ((h.timeSource & faults) != 0) [[unlikely]] {
    for (const HeaderError fault : kTimeSourceFaults) {
      if (hasTimeSourceFault(h.timeSource, fault)) {
        return fault;
      }
    }
  }
  if (h.pulseLow > kMaxTicksLow) {
    return HeaderError::PulseFraction;
  }
  if (h.prevPulseLow > kMaxTicksLow) {
    return HeaderError::PrevFraction;
  }
  const int64_t pulseNs = ticksToNs(h.pulseHigh, h.pulseLow);
  const int64_t prevNs = ticksToNs(h.prevPulseHigh, h.prevPulseLow);
  // Signed, as the ESS EFU compares it: a previous pulse after the pulse is a negative gap.
  if (pulseNs - prevNs > maxPulseGapNs) {
    return HeaderError::PulseGap;
  }
  out.version = h.version;
  out.detectorType = h.detectorType;
  out.outputQueue = h.outputQueue;
  out.timeSource = h.timeSource;
  out.seqNum = h.seqNum;
  out.pulse = {h.pulseHigh, h.pulseLow};
  out.prevPulse = {h.prevPulseHigh, h.prevPulseLow};
  out.pulseTimeNs = pulseNs;
  out.prevPulseTimeNs = prevNs;
  out.payload = data + hdrBytes;
  out.payloadBytes = size - hdrBytes;
  return HeaderError::Ok;
}

/// What writeHeader() puts on the wire. totalLength 0 = leave for setTotalLength().
struct HeaderFields {
  uint8_t version = 0;
  uint8_t detectorType = 0;
  uint16_t totalLength = 0;
  uint8_t outputQueue = 0;
  uint8_t timeSource = 0;
  EssTime pulse;
  EssTime prevPulse;
  uint32_t seqNum = 0;
};

/// Writes a well-formed header (padding 0, cookie "ESS") at the start of `out`; returns its
/// size (30 or 32), or 0 if `out` is too small or the version unknown. Tests and generators
/// corrupt single fields afterwards through the packed structs.
inline size_t writeHeader(std::span<uint8_t> out, const HeaderFields &f) noexcept {
  const size_t bytes = headerBytes(f.version);
  if (bytes == 0 || out.size() < bytes) {
    return 0;
  }
  EssHeaderV1 h{};
  h.v0.padding = 0;
  h.v0.version = f.version;
  h.v0.cookie[0] = 'E';
  h.v0.cookie[1] = 'S';
  h.v0.cookie[2] = 'S';
  h.v0.detectorType = f.detectorType;
  h.v0.totalLength = f.totalLength;
  h.v0.outputQueue = f.outputQueue;
  h.v0.timeSource = f.timeSource;
  h.v0.pulseHigh = f.pulse.high;
  h.v0.pulseLow = f.pulse.low;
  h.v0.prevPulseHigh = f.prevPulse.high;
  h.v0.prevPulseLow = f.prevPulse.low;
  h.v0.seqNum = f.seqNum;
  h.cmacPadding = 0;
  std::memcpy(out.data(), &h, bytes);
  return bytes;
}

/// Patches the total-length field of a header already written at `datagram`.
inline void setTotalLength(uint8_t *datagram, uint16_t totalLength) noexcept {
  std::memcpy(datagram + offsetof(EssHeaderV0, totalLength), &totalLength, sizeof(totalLength));
}

} // namespace efu::readout
