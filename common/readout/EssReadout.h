// SPDX-License-Identifier: BSD-2-Clause
// Counted ESS header parsing for modules: error counters, heartbeats, per-queue sequence loss, TOF.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"
#include "common/stats/SequenceTracker.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace efu::readout {

/// The header counters of a module, registered in the constructor (set-up path) under the ESS
/// EFU's names (docs/counters.md):
///   parser.essheader.errors.<kind>   one per HeaderError (see headerErrorName())
///   parser.essheader.ok              datagrams whose header passed (heartbeats included)
///   parser.essheader.heartbeats      valid headers with no data after them
///   parser.essheader.prev_after_pulse  valid headers whose previous pulse is after the pulse
///                                    (accepted as by the ESS EFU; counted: efu's addition)
///   parser.essheader.oq.<NN>.packets valid headers per output queue (00..11)
///   parser.essheader.seq.lost        datagrams missing from the per-queue sequences (packets)
///   parser.essheader.seq.expected    datagrams the sequences say were sent (PER = lost/expected)
///   parser.essheader.seq.reordered   late arrivals and duplicates (within 1024 below the highest)
///   parser.essheader.seq.restarts    back to 0, or far back and confirmed: a sender restarted
///   parser.essheader.seq.stale       one number far back, not confirmed by the next: ignored
/// Counter references stay valid for the module's life. They are stream counters
/// (ModuleContext::streamCounter): every partition of a module reads every header.
struct HeaderCounters {
  explicit HeaderCounters(sdk::ModuleContext &ctx);

  std::array<Counter *, static_cast<size_t>(HeaderError::Count_)> errors{}; ///< [Ok] unused
  Counter &ok;
  Counter &heartbeats;
  Counter &prevAfterPulse;
  Counter &seqLost;
  Counter &seqExpected;
  Counter &seqReordered;
  Counter &seqRestarts;
  Counter &seqStale;
  std::array<Counter *, kOutputQueues> queuePackets{};

  [[nodiscard]] Counter &error(HeaderError e) const noexcept {
    return *errors[static_cast<size_t>(e)];
  }
};

/// The header sequences, one per output queue, under the Ess rules of
/// common/stats/SequenceTracker.h (in packets; duplicates count as reordered, as in the ESS EFU).
class QueueSequences {
public:
  EssSequenceTracker::Result add(uint8_t queue, uint32_t seq) noexcept {
    return queues_[queue % kOutputQueues].add(seq);
  }

private:
  std::array<EssSequenceTracker, kOutputQueues> queues_{};
};

/// The checks every readout of the fixed-size ESS families (VMM3, CBM) starts with, in the ESS
/// EFU's order. A family's own error enum begins with these values and adds its checks after.
enum class CommonReadoutError : uint8_t {
  Ok,
  Fiber,      ///< fiber > kMaxFiber (23)
  Fen,        ///< FEN > kMaxFen (23)
  DataLength, ///< the length field is not the readout's size
  TimeFrac,   ///< time low > kMaxTicksLow (88 052 499)
};

/// The first failing common check of readout `r` (a packed struct whose size is its length).
template <class Readout> constexpr CommonReadoutError checkCommonFields(const Readout &r) noexcept {
  if (r.fiber > kMaxFiber) {
    return CommonReadoutError::Fiber;
  }
  if (r.fen > kMaxFen) {
    return CommonReadoutError::Fen;
  }
  if (r.length != sizeof(Readout)) {
    return CommonReadoutError::DataLength;
  }
  if (r.timeLow > kMaxTicksLow) {
    return CommonReadoutError::TimeFrac;
  }
  return CommonReadoutError::Ok;
}

/// The ESS EFU's counter-name ending of a common check: "fiber", "fen", "datalen", "timefrac".
constexpr const char *commonReadoutErrorName(CommonReadoutError e) noexcept {
  switch (e) {
  case CommonReadoutError::Ok:
    return "ok";
  case CommonReadoutError::Fiber:
    return "fiber";
  case CommonReadoutError::Fen:
    return "fen";
  case CommonReadoutError::DataLength:
    return "datalen";
  case CommonReadoutError::TimeFrac:
    return "timefrac";
  }
  return "?";
}

/// The key of an ESS instrument file that sets EssReadoutParser's maxPulseGapNs, as every
/// family's key table lists it (the ESS EFU's default: 5 pulses of 14 Hz).
inline constexpr EfuConfigKey kMaxPulseTimeKey{
    "MaxPulseTimeNS",
    sdk::ConfigType::Integer,
    "357142855",
    "Datagrams whose pulse time is more than this (ns) after the previous pulse time are "
    "rejected (parser.essheader.errors.timehigh; a previous pulse after the pulse is accepted, "
    "parser.essheader.prev_after_pulse); default 5 pulses of 14 Hz",
    0,
    4294967295.0};

/// Validates headers and counts: what a module calls first in process().
/// Example:
///   EssHeader h;
///   if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) return;
///   ... walk h.payload / h.payloadBytes ...
class EssReadoutParser {
public:
  /// `accepted`: the detector types this module takes (others count header.errors.type);
  /// `maxPulseGapNs`: see validateHeader() (others count header.errors.timehigh).
  EssReadoutParser(HeaderCounters &counters, DetectorTypes accepted,
                   int64_t maxPulseGapNs = kNoPulseGapLimit) noexcept
      : counters_(counters), accepted_(accepted), maxPulseGapNs_(maxPulseGapNs) {}

  /// True when the header is valid (a heartbeat is valid: payloadBytes == 0, and counted).
  /// A valid header counts header.ok (+ heartbeats, + prev_after_pulse when the previous pulse
  /// is after the pulse: accepted, as by the ESS EFU). A refused one counts what the ESS EFU
  /// counts (countRefusal()): one header.errors.<kind>, except that a time-source byte counts
  /// each of its faults and a bad previous-pulse fraction counts timefrac and prev_timefrac.
  bool parse(const uint8_t *data, size_t size, EssHeader &out) noexcept {
    const HeaderError e = validateHeader(data, size, accepted_, out, maxPulseGapNs_);
    if (e != HeaderError::Ok) [[unlikely]] {
      countRefusal(e, data);
      return false;
    }
    counters_.ok.add();
    if (out.prevPulseTimeNs > out.pulseTimeNs) [[unlikely]] {
      counters_.prevAfterPulse.add();
    }
    counters_.queuePackets[out.outputQueue]->add();
    const EssSequenceTracker::Result r = sequences_.add(out.outputQueue, out.seqNum);
    if (r.lost != 0) {
      counters_.seqLost.add(r.lost);
    }
    counters_.seqExpected.add(r.expected);
    if (r.reordered || r.duplicate) {
      counters_.seqReordered.add();
    }
    if (r.restarted) {
      counters_.seqRestarts.add();
    }
    if (r.stale) {
      counters_.seqStale.add();
    }
    if (out.payloadBytes == 0) {
      counters_.heartbeats.add();
    }
    return true;
  }

  [[nodiscard]] HeaderCounters &counters() const noexcept { return counters_; }

private:
  /// The counters of a header refused as `e`, as the ESS EFU's Parser::validate counts them:
  /// every fault of the time-source byte (it checks all four before refusing), and a bad
  /// previous-pulse fraction under timefrac (its ErrorTimeFrac) as well as efu's prev_timefrac.
  [[gnu::cold]] [[gnu::noinline]] void countRefusal(HeaderError e,
                                                    const uint8_t *data) const noexcept {
    if (e >= HeaderError::Timing && e <= HeaderError::OddFibreSync) {
      // Only a header of full size gets this far: the byte is there.
      const uint8_t ts = data[offsetof(EssHeaderV0, timeSource)];
      for (const HeaderError fault : kTimeSourceFaults) {
        if (hasTimeSourceFault(ts, fault)) {
          counters_.error(fault).add();
        }
      }
      return;
    }
    counters_.error(e).add();
    if (e == HeaderError::PrevFraction) {
      counters_.error(HeaderError::PulseFraction).add();
    }
  }

  HeaderCounters &counters_;
  DetectorTypes accepted_;
  int64_t maxPulseGapNs_;
  QueueSequences sequences_;
};

/// Time-of-flight counters, under the ESS EFU's names and meanings (docs/counters.md):
///   events.timestamp.tof.count         accepted, measured from the pulse
///   events.timestamp.tof.negative      before the pulse (then tried against the previous pulse)
///   events.timestamp.tof.high          after the pulse by more than the maximum: rejected
///   events.timestamp.prevtof.count     accepted, measured from the previous pulse
///   events.timestamp.prevtof.negative  before the previous pulse too: rejected
///   events.timestamp.prevtof.high      after the previous pulse by more than the maximum: rejected
struct TofCounters {
  explicit TofCounters(sdk::ModuleContext &ctx);
  Counter &ok;
  Counter &negative;
  Counter &tooLarge;
  Counter &prevOk;
  Counter &prevNegative;
  Counter &prevTooLarge;
};

/// A time of flight and the pulse it is measured from (the reference time of the event).
struct Tof {
  int64_t pulseTimeNs = 0;
  int32_t tofNs = 0;
};

/// The TOF counters of one datagram, kept in registers by a readout loop and added once
/// (TofCalculator::add): the same totals as counting each readout.
struct TofTally {
  int64_t ok = 0, negative = 0, tooLarge = 0, prevOk = 0, prevNegative = 0, prevTooLarge = 0;
};

/// The ESS rule: tof = event − pulse, rejected above maxTofNs; an event before the pulse is
/// measured from the previous pulse instead, rejected when before that one too or above
/// maxTofNs. maxTofNs must fit an int32, as ev44's time_of_flight does.
class TofCalculator {
public:
  TofCalculator(TofCounters &counters, int64_t maxTofNs) noexcept
      : counters_(counters), maxTofNs_(maxTofNs) {}

  /// True and `out` filled when the event is accepted; counted as the ESS EFU counts.
  bool compute(int64_t eventNs, const EssHeader &h, Tof &out) const noexcept {
    int64_t tof = eventNs - h.pulseTimeNs;
    if (tof >= 0) {
      if (tof > maxTofNs_) {
        counters_.tooLarge.add();
        return false;
      }
      counters_.ok.add();
      out.pulseTimeNs = h.pulseTimeNs;
      out.tofNs = static_cast<int32_t>(tof);
      return true;
    }
    counters_.negative.add();
    tof = eventNs - h.prevPulseTimeNs;
    if (tof < 0) {
      counters_.prevNegative.add();
      return false;
    }
    if (tof > maxTofNs_) {
      counters_.prevTooLarge.add();
      return false;
    }
    counters_.prevOk.add();
    out.pulseTimeNs = h.prevPulseTimeNs;
    out.tofNs = static_cast<int32_t>(tof);
    return true;
  }

  /// compute(), counted in `t` instead of the counters (add(t) once per datagram).
  bool compute(int64_t eventNs, const EssHeader &h, Tof &out, TofTally &t) const noexcept {
    int64_t tof = eventNs - h.pulseTimeNs;
    if (tof >= 0) {
      if (tof > maxTofNs_) {
        ++t.tooLarge;
        return false;
      }
      ++t.ok;
      out.pulseTimeNs = h.pulseTimeNs;
      out.tofNs = static_cast<int32_t>(tof);
      return true;
    }
    ++t.negative;
    tof = eventNs - h.prevPulseTimeNs;
    if (tof < 0) {
      ++t.prevNegative;
      return false;
    }
    if (tof > maxTofNs_) {
      ++t.prevTooLarge;
      return false;
    }
    ++t.prevOk;
    out.pulseTimeNs = h.prevPulseTimeNs;
    out.tofNs = static_cast<int32_t>(tof);
    return true;
  }
  /// Adds a tally to the counters (the counters that did not move are not written).
  void add(const TofTally &t) const noexcept {
    addIf(counters_.ok, t.ok);
    addIf(counters_.negative, t.negative);
    addIf(counters_.tooLarge, t.tooLarge);
    addIf(counters_.prevOk, t.prevOk);
    addIf(counters_.prevNegative, t.prevNegative);
    addIf(counters_.prevTooLarge, t.prevTooLarge);
  }

  [[nodiscard]] int64_t maxTofNs() const noexcept { return maxTofNs_; }

private:
  static void addIf(Counter &c, int64_t n) noexcept {
    if (n != 0) {
      c.add(n);
    }
  }
  TofCounters &counters_;
  int64_t maxTofNs_;
};

} // namespace efu::readout
