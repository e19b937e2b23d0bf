// SPDX-License-Identifier: BSD-2-Clause
// The readoutgen engine: pulses, datagrams, sequence numbers, pacing, truth and error injection.
#pragma once

#include "common/net/SendErrors.h"
#include "common/net/UdpSocket.h"
#include "common/readout/EssHeader.h"
#include "generators/readoutgen/Pattern.h"
#include "generators/readoutgen/Sources.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace efu::readoutgen {

/// Kinds of defects `--inject-errors KIND:N` adds. Each but PrevAfterPulse is a copy of the last
/// valid datagram with one defect, sent in addition to it (it uses no sequence number): the
/// receiving module refuses it and counts it (injectionCounters()). PrevAfterPulse is accepted
/// (as the ESS EFU accepts it): it is no copy but a valid datagram of the run, with its sequence
/// number and truth, whose previous pulse is one second after its pulse (injectionAccepted()).
enum class Injection : uint8_t {
  Cookie,         ///< cookie "ESX"                      → parser.essheader.errors.cookie
  Version,        ///< version 2                         → parser.essheader.errors.version
  Padding,        ///< padding byte 1                    → parser.essheader.errors.pad
  Length,         ///< total length field = size + 1     → parser.essheader.errors.size
  Truncated,      ///< only the first 2/3 of the bytes   → parser.essheader.errors.size
  Short,          ///< only the first 20 bytes           → parser.essheader.errors.buffer
  Queue,          ///< output queue 12                   → parser.essheader.errors.output_queue
  Type,           ///< detector type 0xEE                → parser.essheader.errors.type
  PulseFraction,  ///< pulse time low 88 052 500         → parser.essheader.errors.timefrac
  PrevFraction,   ///< prev. pulse low 88 052 500        → errors.timefrac and errors.prev_timefrac
  PrevAfterPulse, ///< prev. pulse one second after pulse → parser.essheader.prev_after_pulse
  Timing,         ///< time source: local time, timing-system sync → parser.essheader.errors.timing
  TimeStatus,     ///< time source: local time, status error bit → parser.essheader.errors.time_status
  EvenFibreSync,  ///< time source: even fibre sync lost → parser.essheader.errors.even_fibre_sync
  OddFibreSync,   ///< time source: odd fibre sync lost  → parser.essheader.errors.odd_fibre_sync
};
/// All kinds, in enum order.
std::vector<Injection> allInjections();
/// The spelling used on the command line ("cookie", "prev_after_pulse", ...).
const char *injectionName(Injection kind);
/// True when the receiving module accepts the defect (PrevAfterPulse): it is put into valid
/// datagrams rather than sent as malformed copies, and their events stay in the truth.
bool injectionAccepted(Injection kind);
/// The module counters one such datagram moves, each by one (a clean run of the same seed moves
/// none of them, and every other module counter as this one). PrevFraction moves timefrac (the
/// ESS EFU's count of both fractions) and prev_timefrac; PrevAfterPulse moves
/// parser.essheader.prev_after_pulse only (its events are the clean run's, except in a module
/// that forms events datagrams later, trex: docs/readoutgen.md).
std::vector<std::string> injectionCounters(Injection kind);
/// Parses "KIND:N". Throws std::invalid_argument naming the text and the known kinds.
std::pair<Injection, uint64_t> parseInjection(const std::string &text);
/// Writes the malformed variant of `valid` into `out` (at least valid.size() + 1 bytes);
/// returns the size to send. (PrevAfterPulse: the variant the generator sends in place of a
/// valid datagram, not in addition to it.)
size_t makeMalformed(Injection kind, std::span<const uint8_t> valid, std::span<uint8_t> out);

/// Time-of-flight distribution. Spec "uniform:MIN_MS:MAX_MS" or "gauss:MEAN_MS:SIGMA_MS"
/// (milliseconds, decimals allowed). Draws integer ns in [0, 2^31 - 1]; gaussian draws outside
/// are redrawn.
class TofDistribution {
public:
  explicit TofDistribution(const std::string &spec);
  int64_t draw(std::mt19937_64 &rng);
  [[nodiscard]] const std::string &spec() const noexcept { return spec_; }

private:
  std::string spec_;
  bool gauss_ = false;
  double a_ = 0.0;
  double b_ = 0.0;
};

/// Command-line options (defaults are the documented ones; main.cpp lets CLI11 print them).
struct GeneratorOptions {
  std::string detector = "caen";
  std::vector<std::string> moduleDirs; ///< --module-path
  std::string configPath;
  std::string calibrationPath; ///< --calibration: raw values such that efu --calibration recovers the pixels
  std::string address = "127.0.0.1";
  uint16_t port = 9000;
  uint64_t count = 0;              ///< events to send; 0 = unlimited
  double durationS = 0.0;          ///< 0 = unlimited
  double rateEventsPerS = 0.0;     ///< 0 = not paced by events
  double bitsPerS = 0.0;           ///< 0 = not paced by bits (datagram bytes * 8)
  uint32_t sizeBytes = static_cast<uint32_t>(readout::kMaxDatagramBytes); ///< datagram limit
  double pulseHz = 14.0;
  /// The largest pulse - previous pulse the instrument file accepts (its MaxPulseTimeNS); when
  /// the pulse period is longer, headers carry a previous pulse this close instead, so that
  /// the ESS EFU (and efu) accept them. 0 = no limit.
  int64_t maxPulseGapNs = 0;
  uint64_t eventsPerPulse = 0;     ///< 0 = rate / pulseHz when paced by events, else 1000
  std::string tof;                 ///< "" = uniform over one pulse period
  std::string pattern = "ring";
  std::string maskPath;            ///< PGM mask; overrides pattern
  uint32_t queues = 1;             ///< datagrams go round-robin to output queues 0..queues-1
  uint32_t headerVersion = 0;
  uint64_t seed = 1;
  std::string truthPath;
  std::string pcapOutPath; ///< --pcap-out: every datagram sent, also written to this capture
  std::vector<std::string> inject; ///< KIND:N
  uint32_t injectEvery = 1;        ///< one malformed datagram after every this many valid ones
  bool quiet = false;
  bool json = false;
};

/// Where datagrams go (a UDP socket, or a vector in tests).
class DatagramSink {
public:
  virtual ~DatagramSink() = default;
  /// True when the datagram was sent.
  virtual bool send(std::span<const uint8_t> datagram) = 0;
  /// Why the last send() that returned false failed (an errno).
  [[nodiscard]] virtual int lastErrno() const noexcept { return 0; }
};

/// A connected UDP socket. Throws std::runtime_error on set-up failure.
class UdpDatagramSink final : public DatagramSink {
public:
  UdpDatagramSink(const std::string &address, uint16_t port);
  bool send(std::span<const uint8_t> datagram) override;
  [[nodiscard]] int lastErrno() const noexcept override { return lastErrno_; }

private:
  net::UdpSocket socket_;
  int lastErrno_ = 0;
};

/// One ground-truth event as written to --truth.
struct TruthEvent {
  int64_t pulseTimeNs;
  int64_t tofNs;
  int32_t pixelId;          ///< or the value a histogram adds (a source's named output)
  std::string_view source{}; ///< the output's name (TruthSink::addFrom), "" for add()
  friend bool operator==(const TruthEvent &, const TruthEvent &) = default;
  friend auto operator<=>(const TruthEvent &, const TruthEvent &) = default;
};

/// Totals of a run.
struct GeneratorSummary {
  uint64_t events = 0;       ///< events in datagrams that were sent (= lines of --truth)
  uint64_t readouts = 0;     ///< readouts written by the source (noise included)
  uint64_t datagrams = 0;    ///< valid datagrams sent
  uint64_t bytes = 0;        ///< bytes of those
  uint64_t pulses = 0;       ///< pulses started
  uint64_t injected = 0;     ///< malformed datagrams sent (refused by the module)
  /// Valid datagrams (in `datagrams`) sent with an accepted defect (prev_after_pulse).
  uint64_t altered = 0;
  SendErrors sendErrors;     ///< datagrams the socket refused (their events are not in the truth)
  /// Drawn neutron times no position took: the source refused kSlotTries positions at that time
  /// (e.g. too close to the previous neutron of every cassette), so the time is given up.
  uint64_t slotsSkipped = 0;
  double elapsedS = 0.0;
  [[nodiscard]] double eventsPerS() const noexcept;
  [[nodiscard]] double bitsPerS() const noexcept;
};

std::string summaryText(const GeneratorSummary &s);
std::string summaryJson(const GeneratorSummary &s);

/// The hot loop. Owns the datagram buffer; not copyable; one thread.
class Generator {
public:
  /// Positions tried at one drawn neutron time before the time is given up.
  static constexpr int kSlotTries = 64;
  /// Throws std::invalid_argument for inconsistent options (e.g. size too small for a header
  /// and one event, a bad --tof or --inject-errors).
  Generator(const GeneratorOptions &options, SourcePtr source,
            Pattern pattern, DatagramSink &sink);
  Generator(const Generator &) = delete;
  Generator &operator=(const Generator &) = delete;

  /// Ground truth of sent datagrams goes here (optional; called in send order).
  void onTruth(std::function<void(const TruthEvent &)> callback) { truthOut_ = std::move(callback); }

  /// Runs until --count / --stopafter / `stop`; calls `progress` about once a second.
  GeneratorSummary run(const std::atomic<bool> &stop,
                       const std::function<void(const GeneratorSummary &)> &progress = {});

  [[nodiscard]] uint64_t eventsPerPulse() const noexcept { return eventsPerPulse_; }
  [[nodiscard]] double pulsePeriodNs() const noexcept { return periodNs_; }
  [[nodiscard]] const ReadoutSource &source() const noexcept { return *source_; }
  /// Accepted defects (prev_after_pulse) asked for and not sent: the run had too few valid
  /// datagrams (one in every --inject-every carries one).
  [[nodiscard]] uint64_t alterationsOwed() const noexcept { return altersLeft_; }

private:
  class PendingTruth;
  void startPulse(uint64_t k) noexcept;
  void flush(GeneratorSummary &s, const std::atomic<bool> &stop);
  void injectAfter(GeneratorSummary &s);

  GeneratorOptions options_;
  SourcePtr source_;
  Pattern pattern_;
  DatagramSink &sink_;
  TofDistribution tof_;
  std::mt19937_64 rng_;
  std::function<void(const TruthEvent &)> truthOut_;
  double periodNs_ = 0.0;
  uint64_t eventsPerPulse_ = 0;
  std::vector<int64_t> pulseTofsNs_; ///< this pulse's times of flight, sorted
  int64_t startRealNs_ = 0;
  int64_t startMonoNs_ = 0;
  readout::HeaderFields header_;
  uint64_t pulseIndex_ = UINT64_MAX;
  uint32_t nextQueue_ = 0;
  std::array<uint32_t, readout::kOutputQueues> seq_{};
  std::vector<uint8_t> buf_;
  std::vector<uint8_t> bad_;
  size_t len_ = 0;
  size_t headerBytes_ = 0;
  bool essHeader_ = true;             ///< the source's datagrams carry an ESS header
  std::vector<uint8_t> pulseBuf_;     ///< the source's own datagram for the current pulse
  size_t pulseLen_ = 0;               ///< its size; sent before the pulse's first datagram
  std::vector<TruthEvent> pending_;
  uint64_t pendingEvents_ = 0;
  uint64_t generated_ = 0; ///< events encoded so far (sent or pending)
  uint64_t slot_ = 0;      ///< drawn neutron times used so far: encoded, or given up
  std::vector<std::pair<Injection, uint64_t>> inject_; ///< malformed copies still to send
  size_t injectKind_ = 0;
  uint64_t altersLeft_ = 0; ///< valid datagrams still to send with the previous pulse after
                            ///< the pulse (prev_after_pulse)
};

} // namespace efu::readoutgen
