// SPDX-License-Identifier: BSD-2-Clause
// The readoutgen engine.
#include "generators/readoutgen/Generator.h"

#include "common/time/Time.h"

#include <sys/socket.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace efu::readoutgen {

using readout::EssHeaderV0;

// ---- injection -------------------------------------------------------------------------------

std::vector<Injection> allInjections() {
  std::vector<Injection> out;
  for (int k = 0; k <= static_cast<int>(Injection::OddFibreSync); ++k) {
    out.push_back(static_cast<Injection>(k));
  }
  return out;
}

const char *injectionName(Injection kind) {
  switch (kind) {
  case Injection::Cookie: return "cookie";
  case Injection::Version: return "version";
  case Injection::Padding: return "padding";
  case Injection::Length: return "length";
  case Injection::Truncated: return "truncated";
  case Injection::Short: return "short";
  case Injection::Queue: return "queue";
  case Injection::Type: return "type";
  case Injection::PulseFraction: return "pulse_fraction";
  case Injection::PrevFraction: return "prev_pulse_fraction";
  case Injection::PrevAfterPulse: return "prev_after_pulse";
  case Injection::Timing: return "timing";
  case Injection::TimeStatus: return "time_status";
  case Injection::EvenFibreSync: return "even_fibre_sync";
  case Injection::OddFibreSync: return "odd_fibre_sync";
  }
  return "?";
}

bool injectionAccepted(Injection kind) { return kind == Injection::PrevAfterPulse; }

std::vector<std::string> injectionCounters(Injection kind) {
  using readout::HeaderError;
  const auto errors = [](std::initializer_list<HeaderError> kinds) {
    std::vector<std::string> out;
    for (const HeaderError e : kinds) {
      out.push_back(std::string("parser.essheader.errors.") + readout::headerErrorName(e));
    }
    return out;
  };
  switch (kind) {
  case Injection::Cookie: return errors({HeaderError::Cookie});
  case Injection::Version: return errors({HeaderError::Version});
  case Injection::Padding: return errors({HeaderError::Padding});
  case Injection::Length:
  case Injection::Truncated: return errors({HeaderError::Length});
  case Injection::Short: return errors({HeaderError::TooShort});
  case Injection::Queue: return errors({HeaderError::OutputQueue});
  case Injection::Type: return errors({HeaderError::DetectorType});
  case Injection::PulseFraction: return errors({HeaderError::PulseFraction});
  // The ESS EFU's timefrac counts both fractions; prev_timefrac is efu's finer count.
  case Injection::PrevFraction: return errors({HeaderError::PulseFraction, HeaderError::PrevFraction});
  case Injection::PrevAfterPulse: return {"parser.essheader.prev_after_pulse"};
  // One fault each (time sources with several faults count each: EssReadoutParser).
  case Injection::Timing: return errors({HeaderError::Timing});
  case Injection::TimeStatus: return errors({HeaderError::TimeStatus});
  case Injection::EvenFibreSync: return errors({HeaderError::EvenFibreSync});
  case Injection::OddFibreSync: return errors({HeaderError::OddFibreSync});
  }
  return {};
}

std::pair<Injection, uint64_t> parseInjection(const std::string &text) {
  const auto colon = text.find(':');
  std::string known;
  for (Injection k : allInjections()) {
    known += (known.empty() ? "" : ", ") + std::string(injectionName(k));
  }
  if (colon == std::string::npos) {
    throw std::invalid_argument("--inject-errors '" + text + "': expected KIND:N; kinds: " + known);
  }
  const std::string name = text.substr(0, colon);
  const std::string number = text.substr(colon + 1);
  uint64_t n = 0;
  size_t used = 0;
  try {
    n = std::stoull(number, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != number.size() || number[0] == '-') {
    throw std::invalid_argument("--inject-errors '" + text + "': N must be a non-negative integer");
  }
  for (Injection k : allInjections()) {
    if (name == injectionName(k)) {
      return {k, n};
    }
  }
  throw std::invalid_argument("--inject-errors '" + text + "': unknown kind '" + name +
                              "'; kinds: " + known);
}

size_t makeMalformed(Injection kind, std::span<const uint8_t> valid, std::span<uint8_t> out) {
  std::memcpy(out.data(), valid.data(), valid.size());
  EssHeaderV0 h;
  std::memcpy(&h, out.data(), sizeof(h));
  size_t size = valid.size();
  switch (kind) {
  case Injection::Cookie: h.cookie[2] = 'X'; break;
  case Injection::Version: h.version = 2; break;
  case Injection::Padding: h.padding = 1; break;
  case Injection::Length: h.totalLength = static_cast<uint16_t>(size + 1); break;
  case Injection::Truncated: size = std::max<size_t>(sizeof(EssHeaderV0) + 2, size * 2 / 3); break;
  case Injection::Short: size = 20; break;
  case Injection::Queue: h.outputQueue = readout::kOutputQueues; break;
  case Injection::Type: h.detectorType = 0xEE; break;
  case Injection::Timing: h.timeSource = readout::timesource::kTimingSystemSync; break;
  case Injection::TimeStatus: h.timeSource = readout::timesource::kTimingStatus; break;
  case Injection::EvenFibreSync:
    h.timeSource = readout::timesource::kTimingSystemTime | readout::timesource::kEvenFibreSyncLost;
    break;
  case Injection::OddFibreSync:
    h.timeSource = readout::timesource::kTimingSystemTime | readout::timesource::kOddFibreSyncLost;
    break;
  case Injection::PulseFraction: h.pulseLow = readout::kMaxTicksLow + 1; break;
  case Injection::PrevFraction: h.prevPulseLow = readout::kMaxTicksLow + 1; break;
  case Injection::PrevAfterPulse:
    h.prevPulseHigh = h.pulseHigh + 1;
    h.prevPulseLow = h.pulseLow;
    break;
  }
  std::memcpy(out.data(), &h, sizeof(h));
  return size;
}

// ---- TOF -------------------------------------------------------------------------------------

TofDistribution::TofDistribution(const std::string &spec) : spec_(spec) {
  const auto c1 = spec.find(':');
  const auto c2 = c1 == std::string::npos ? c1 : spec.find(':', c1 + 1);
  const std::string kind = spec.substr(0, c1);
  bool ok = c2 != std::string::npos && (kind == "uniform" || kind == "gauss");
  if (ok) {
    try {
      size_t u1 = 0;
      size_t u2 = 0;
      const std::string s1 = spec.substr(c1 + 1, c2 - c1 - 1);
      const std::string s2 = spec.substr(c2 + 1);
      a_ = std::stod(s1, &u1) * 1e6;
      b_ = std::stod(s2, &u2) * 1e6;
      ok = u1 == s1.size() && u2 == s2.size();
    } catch (const std::exception &) {
      ok = false;
    }
  }
  gauss_ = kind == "gauss";
  constexpr double kMax = 2147483647.0;
  if (ok) {
    ok = gauss_ ? (b_ >= 0 && a_ >= 0 && a_ <= kMax) : (a_ >= 0 && a_ <= b_ && b_ <= kMax);
  }
  if (!ok) {
    throw std::invalid_argument("--tof '" + spec +
                                "': expected uniform:MIN_MS:MAX_MS (0 <= MIN <= MAX <= 2147) or "
                                "gauss:MEAN_MS:SIGMA_MS, in milliseconds");
  }
}

int64_t TofDistribution::draw(std::mt19937_64 &rng) {
  if (!gauss_) {
    std::uniform_int_distribution<int64_t> d(std::llround(a_), std::llround(b_));
    return d(rng);
  }
  std::normal_distribution<double> d(a_, b_);
  for (;;) {
    const double v = std::round(d(rng));
    if (v >= 0.0 && v <= 2147483647.0) {
      return static_cast<int64_t>(v);
    }
  }
}

// ---- UDP -------------------------------------------------------------------------------------

UdpDatagramSink::UdpDatagramSink(const std::string &address, uint16_t port)
    : socket_(net::UdpSocket::connectedTo(address, port, 4 << 20)) {}

bool UdpDatagramSink::send(std::span<const uint8_t> datagram) {
  for (;;) {
    const ssize_t n = ::send(socket_.fd(), datagram.data(), datagram.size(), 0);
    if (n == static_cast<ssize_t>(datagram.size())) {
      return true;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    lastErrno_ = n < 0 ? errno : EMSGSIZE;
    return false;
  }
}

// ---- summary ---------------------------------------------------------------------------------

double GeneratorSummary::eventsPerS() const noexcept {
  return elapsedS > 0 ? static_cast<double>(events) / elapsedS : 0.0;
}
double GeneratorSummary::bitsPerS() const noexcept {
  return elapsedS > 0 ? static_cast<double>(bytes) * 8.0 / elapsedS : 0.0;
}

std::string summaryText(const GeneratorSummary &s) {
  return fmt::format("readoutgen summary: {} events in {} datagrams ({} readouts, {} B) over {} "
                     "pulses in {:.3f} s\n"
                     "readoutgen summary: {:.3f} M events/s, {:.1f} Mb/s; {} malformed "
                     "datagrams injected, {} with the previous pulse after the pulse, send "
                     "errors {}, {} neutron times skipped\n",
                     s.events, s.datagrams, s.readouts, s.bytes, s.pulses, s.elapsedS,
                     s.eventsPerS() / 1e6, s.bitsPerS() / 1e6, s.injected, s.altered,
                     s.sendErrors.text(), s.slotsSkipped);
}

std::string summaryJson(const GeneratorSummary &s) {
  return fmt::format("{{\"events\":{},\"readouts\":{},\"datagrams\":{},\"bytes\":{},\"pulses\":{},"
                     "\"injected\":{},\"altered\":{},\"send_errors\":{},\"errors\":{},"
                     "\"slots_skipped\":{},\"elapsed_s\":{:.6f},\"events_per_s\":{:.1f},"
                     "\"bits_per_s\":{:.1f}}}",
                     s.events, s.readouts, s.datagrams, s.bytes, s.pulses, s.injected, s.altered,
                     s.sendErrors.total(), s.sendErrors.json().dump(), s.slotsSkipped, s.elapsedS,
                     s.eventsPerS(), s.bitsPerS());
}

// ---- generator -------------------------------------------------------------------------------

/// Collects the truth of the datagram being filled; committed when it is sent.
class Generator::PendingTruth final : public TruthSink {
public:
  explicit PendingTruth(std::vector<TruthEvent> &out) : out_(out) {}
  void add(int64_t pulseTimeNs, int64_t tofNs, int32_t pixelId) override {
    out_.push_back({pulseTimeNs, tofNs, pixelId});
  }
  void addFrom(std::string_view source, int64_t pulseTimeNs, int64_t tofNs,
               int32_t pixelId) override {
    out_.push_back({pulseTimeNs, tofNs, pixelId, source});
  }

private:
  std::vector<TruthEvent> &out_;
};

Generator::Generator(const GeneratorOptions &options, SourcePtr source,
                     Pattern pattern, DatagramSink &sink)
    : options_(options), source_(std::move(source)), pattern_(std::move(pattern)), sink_(sink),
      tof_(options.tof.empty() ? fmt::format("uniform:0:{}", 1e3 / options.pulseHz)
                               : options.tof),
      rng_(options.seed ^ 0x9E3779B97F4A7C15ULL) {
  if (!(options_.pulseHz > 0.0 && options_.pulseHz <= 1e6)) {
    throw std::invalid_argument(fmt::format("--pulse-hz {}: must be in (0, 1e6]", options_.pulseHz));
  }
  if (options_.headerVersion > 1) {
    throw std::invalid_argument("--header-version must be 0 or 1");
  }
  if (options_.queues < 1 || options_.queues > readout::kOutputQueues) {
    throw std::invalid_argument(fmt::format("--queues {}: must be 1..{}", options_.queues,
                                            readout::kOutputQueues));
  }
  essHeader_ = source_->essHeader();
  headerBytes_ =
      essHeader_ ? readout::headerBytes(static_cast<uint8_t>(options_.headerVersion)) : 0;
  if (!essHeader_ && !options_.inject.empty()) {
    throw std::invalid_argument("--inject-errors: this detector's datagrams have no ESS header");
  }
  pulseBuf_.assign(256, 0);
  if (options_.sizeBytes > 65535 || options_.sizeBytes < headerBytes_ + source_->maxEventBytes()) {
    throw std::invalid_argument(
        fmt::format("--size {}: must hold the {}-byte header and one event ({} B) and be at most "
                    "65535 (the header's length field)",
                    options_.sizeBytes, headerBytes_, source_->maxEventBytes()));
  }
  if (options_.injectEvery == 0) {
    throw std::invalid_argument("--inject-every must be at least 1");
  }
  for (const std::string &spec : options_.inject) {
    const auto [kind, n] = parseInjection(spec);
    if (injectionAccepted(kind)) {
      altersLeft_ += n;
    } else {
      inject_.emplace_back(kind, n);
    }
  }
  periodNs_ = 1e9 / options_.pulseHz;
  eventsPerPulse_ = options_.eventsPerPulse;
  if (eventsPerPulse_ == 0) {
    eventsPerPulse_ = options_.rateEventsPerS > 0
                          ? std::max<uint64_t>(1, std::llround(options_.rateEventsPerS /
                                                               options_.pulseHz))
                          : 1000;
  }
  // A pulse's times of flight are drawn up front and sent in increasing order, as detector
  // electronics do (VMM3 clustering relies on roughly time-ordered hits).
  pulseTofsNs_.assign(eventsPerPulse_, 0);
  buf_.assign(options_.sizeBytes, 0);
  bad_.assign(options_.sizeBytes + 1, 0);
  pending_.reserve(options_.sizeBytes / std::max<size_t>(1, source_->maxEventBytes()) + 1);
  header_.version = static_cast<uint8_t>(options_.headerVersion);
  header_.detectorType = source_->detectorType();
}

void Generator::startPulse(uint64_t k) noexcept {
  const auto at = [&](uint64_t i) {
    return readout::nsToTicks(startRealNs_ + std::llround(static_cast<double>(i) * periodNs_));
  };
  header_.pulse = at(k + 1);
  header_.prevPulse = at(k);
  const int64_t pulseNs = readout::ticksToNs(header_.pulse.high, header_.pulse.low);
  if (options_.maxPulseGapNs > 0 &&
      pulseNs - readout::ticksToNs(header_.prevPulse.high, header_.prevPulse.low) >
          options_.maxPulseGapNs) {
    // A tick no more than maxPulseGapNs before the pulse (the nearest to it, or the next).
    readout::EssTime prev = readout::nsToTicks(pulseNs - options_.maxPulseGapNs);
    if (pulseNs - readout::ticksToNs(prev.high, prev.low) > options_.maxPulseGapNs) {
      prev = prev.low < readout::kMaxTicksLow ? readout::EssTime{prev.high, prev.low + 1}
                                              : readout::EssTime{prev.high + 1, 0};
    }
    header_.prevPulse = prev;
  }
  pulseIndex_ = k;
  pulseLen_ = source_->pulseDatagram(
      sdk::Pulse{pulseNs, readout::ticksToNs(header_.prevPulse.high, header_.prevPulse.low), k},
      std::span<uint8_t>(pulseBuf_));
  for (auto &tofNs : pulseTofsNs_) {
    tofNs = tof_.draw(rng_);
  }
  std::sort(pulseTofsNs_.begin(), pulseTofsNs_.end());
}

void Generator::flush(GeneratorSummary &s, const std::atomic<bool> &stop) {
  if (len_ <= headerBytes_) {
    return;
  }
  const uint32_t q = nextQueue_;
  nextQueue_ = (nextQueue_ + 1) % options_.queues;
  header_.outputQueue = static_cast<uint8_t>(q);
  header_.seqNum = seq_[q]++;
  header_.totalLength = static_cast<uint16_t>(len_);
  // --inject-errors prev_after_pulse: one valid datagram in every --inject-every, while any are
  // owed, gets a previous pulse one second after its pulse. The module accepts it (as the ESS
  // EFU does) and measures its events, all at or after the pulse, from the pulse: the truth.
  const bool alter = essHeader_ && altersLeft_ > 0 &&
                     (s.datagrams + 1) % options_.injectEvery == 0;
  if (alter) {
    readout::HeaderFields f = header_;
    f.prevPulse = readout::EssTime{header_.pulse.high + 1, header_.pulse.low};
    readout::writeHeader(buf_, f);
  } else if (essHeader_) {
    readout::writeHeader(buf_, header_);
  }

  int64_t deadline = 0;
  if (options_.rateEventsPerS > 0) {
    const double events = static_cast<double>(s.events + pendingEvents_);
    deadline = startMonoNs_ + std::llround(events * 1e9 / options_.rateEventsPerS);
  }
  if (options_.bitsPerS > 0) {
    const double bits = static_cast<double>(s.bytes + len_) * 8.0;
    deadline = std::max<int64_t>(deadline, startMonoNs_ + std::llround(bits * 1e9 / options_.bitsPerS));
  }
  if (deadline > 0) {
    sleepUntilMonotonicNs(deadline, stop); // a stop sends this one unpaced, then run() ends
  }
  if (pulseLen_ > 0) { // the pulse's own datagram, right before its first readouts
    if (sink_.send(std::span<const uint8_t>(pulseBuf_.data(), pulseLen_))) {
      ++s.datagrams;
      s.bytes += pulseLen_;
    } else {
      s.sendErrors.count(sink_.lastErrno(), 1);
    }
    pulseLen_ = 0;
  }
  if (sink_.send(std::span<const uint8_t>(buf_.data(), len_))) {
    ++s.datagrams;
    if (alter) {
      --altersLeft_;
      ++s.altered;
    }
    s.bytes += len_;
    s.events += pendingEvents_;
    if (truthOut_) {
      for (const TruthEvent &e : pending_) {
        truthOut_(e);
      }
    }
    injectAfter(s);
  } else {
    s.sendErrors.count(sink_.lastErrno(), 1);
  }
  pending_.clear();
  pendingEvents_ = 0;
  len_ = 0;
}

void Generator::injectAfter(GeneratorSummary &s) {
  if (inject_.empty() || s.datagrams % options_.injectEvery != 0) {
    return;
  }
  // Round-robin over the kinds that still have datagrams to send.
  for (size_t tries = 0; tries < inject_.size(); ++tries) {
    auto &[kind, left] = inject_[injectKind_];
    injectKind_ = (injectKind_ + 1) % inject_.size();
    if (left == 0) {
      continue;
    }
    const size_t size =
        makeMalformed(kind, std::span<const uint8_t>(buf_.data(), len_), std::span<uint8_t>(bad_));
    if (sink_.send(std::span<const uint8_t>(bad_.data(), size))) {
      --left;
      ++s.injected;
    } else {
      s.sendErrors.count(sink_.lastErrno(), 1);
    }
    return;
  }
}

GeneratorSummary Generator::run(const std::atomic<bool> &stop,
                                const std::function<void(const GeneratorSummary &)> &progress) {
  GeneratorSummary s;
  PendingTruth truth(pending_);
  startRealNs_ = realtimeNs();
  startMonoNs_ = monotonicNs();
  int64_t nextProgressNs = startMonoNs_ + kNsPerSec;
  const int64_t endNs = options_.durationS > 0
                            ? startMonoNs_ + std::llround(options_.durationS * 1e9)
                            : INT64_MAX;
  const size_t maxEvent = source_->maxEventBytes();
  uint64_t skipped = 0;
  int refusedAtSlot = 0;
  len_ = 0;
  // After each flush: stop? progress? (checked per datagram, never per event)
  const auto afterFlush = [&]() {
    const int64_t now = monotonicNs();
    if (progress && now >= nextProgressNs) {
      s.readouts = source_->readouts();
      s.elapsedS = static_cast<double>(now - startMonoNs_) / 1e9;
      progress(s);
      nextProgressNs += kNsPerSec;
    }
    return stop.load(std::memory_order_relaxed) || now >= endNs;
  };
  for (;;) {
    if (options_.count != 0 && generated_ >= options_.count) {
      break;
    }
    const uint64_t k = slot_ / eventsPerPulse_;
    if (k != pulseIndex_) {
      if (len_ > headerBytes_) {
        flush(s, stop);
        if (afterFlush()) {
          break;
        }
      }
      startPulse(k);
      ++s.pulses;
    }
    if (len_ == 0) {
      len_ = headerBytes_; // the header is written at flush, when queue and sequence are known
    }
    if (buf_.size() - len_ < maxEvent) {
      flush(s, stop);
      if (afterFlush()) {
        break;
      }
      continue;
    }
    const Pattern::Point p = pattern_.pick(rng_);
    Neutron n;
    n.x = p.x;
    n.y = p.y;
    n.pulse = header_.pulse;
    n.pulseTimeNs = readout::ticksToNs(n.pulse.high, n.pulse.low);
    n.eventTime = readout::nsToTicks(n.pulseTimeNs + pulseTofsNs_[slot_ % eventsPerPulse_]);
    n.eventTimeNs = readout::ticksToNs(n.eventTime.high, n.eventTime.low);
    n.index = generated_;
    const size_t bytes =
        source_->encodeEvent(n, std::span<uint8_t>(buf_.data() + len_, buf_.size() - len_), truth);
    if (bytes == 0) {
      if (++skipped > 1'000'000 && generated_ == 0) {
        throw std::runtime_error("the source cannot encode any pixel of the pattern (is the "
                                 "mapping empty for the pattern's rows?)");
      }
      // Another position at the same time, up to kSlotTries; then the time is given up (a
      // source may refuse every position at a time, e.g. all its cassettes still busy).
      if (++refusedAtSlot >= kSlotTries) {
        refusedAtSlot = 0;
        ++slot_;
        ++s.slotsSkipped;
      }
      continue;
    }
    refusedAtSlot = 0;
    ++slot_;
    len_ += bytes;
    ++pendingEvents_;
    ++generated_;
  }
  flush(s, stop);
  // Injections still owed (a short run): append them after the last valid datagram.
  for (auto &[kind, left] : inject_) {
    (void)kind;
    while (left > 0 && s.datagrams > 0 && !stop.load(std::memory_order_relaxed)) {
      const uint64_t before = s.injected + s.sendErrors.total();
      const uint64_t every = options_.injectEvery;
      options_.injectEvery = 1;
      // Rebuild the last datagram's header into buf_ is not needed: buf_ still holds it.
      len_ = header_.totalLength;
      injectAfter(s);
      options_.injectEvery = static_cast<uint32_t>(every);
      len_ = 0;
      if (s.injected + s.sendErrors.total() == before) {
        break;
      }
    }
  }
  s.readouts = source_->readouts();
  s.elapsedS = static_cast<double>(monotonicNs() - startMonoNs_) / 1e9;
  return s;
}

} // namespace efu::readoutgen
