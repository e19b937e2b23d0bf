// SPDX-License-Identifier: BSD-2-Clause
// The per-interval receiver line (the printout of Christensen and Richter's UDP paper, named in
// docs/performance.md): rates, drops, loss and PER.
#include "efu/IntervalReport.h"

#include "common/time/Time.h"

#include <fmt/format.h>

namespace efu {

const Counter &IntervalReport::need(const Stats &stats, const char *name) {
  const Counter *counter = stats.find(name);
  if (counter == nullptr) {
    throw StatsError(std::string("interval report needs counter ") + name);
  }
  return *counter;
}

IntervalReport::IntervalReport(const Stats &stats, const Counter *lost, const Counter *expected)
    : packets_(need(stats, "receive.packets")), bytes_(need(stats, "receive.bytes")),
      ringFullWaits_(need(stats, "receive.ring_full_waits")),
      kernel_(need(stats, "receive.dropped")), truncated_(need(stats, "receive.truncated")),
      unread_(need(stats, "receive.unread")),
      rcvbufErrors_(need(stats, "kernel.udp.rcvbuf_errors")), lost_(lost), expected_(expected),
      kafkaDelivered_(stats.find("kafka.delivered")), kafkaFailed_(stats.find("kafka.failed")),
      kafkaQueued_(stats.find("kafka.queue.messages")), startNs_(monotonicNs()), lastNs_(startNs_) {
}

std::string IntervalReport::total(int64_t nowNs) {
  lastNs_ = startNs_;
  lastPackets_ = 0;
  lastBytes_ = 0;
  lastDropped_ = 0;
  lastLost_ = 0;
  lastFailed_ = 0;
  return line(nowNs);
}

std::string IntervalReport::line(int64_t nowNs) {
  const double seconds = static_cast<double>(nowNs - lastNs_) / 1e9;
  const int64_t packets = packets_.get();
  const int64_t bytes = bytes_.get();
  const double mbps = seconds > 0 ? static_cast<double>(bytes - lastBytes_) * 8 / seconds / 1e6 : 0;
  const double kpps = seconds > 0 ? static_cast<double>(packets - lastPackets_) / seconds / 1e3 : 0;
  const int64_t dropped = kernel_.get() + truncated_.get() + unread_.get();
  const int64_t lostNow = lost_ != nullptr ? lost_->get() : 0;
  const int64_t failed = kafkaFailed_ != nullptr ? kafkaFailed_->get() : 0;
  status_ = (packets > lastPackets_ ? kReceiving : 0U) |
            (dropped > lastDropped_ || lostNow > lastLost_ ? kLosing : 0U) |
            (failed > lastFailed_ ? kKafkaFailing : 0U);
  lastNs_ = nowNs;
  lastPackets_ = packets;
  lastBytes_ = bytes;
  lastDropped_ = dropped;
  lastLost_ = lostNow;
  lastFailed_ = failed;

  std::string loss;
  std::string lossJson;
  if (lost_ != nullptr && expected_ != nullptr) {
    const int64_t lost = lost_->get();
    const int64_t expected = expected_->get();
    const double per = expected > 0 ? static_cast<double>(lost) / static_cast<double>(expected) : 0;
    loss = fmt::format(" | lost {} PER {:.3g}", lost, per);
    lossJson = fmt::format(R"(,"lost":{},"expected":{},"per":{:.6g})", lost, expected, per);
  }
  std::string kafka;
  std::string kafkaJson;
  if (kafkaDelivered_ != nullptr && kafkaFailed_ != nullptr && kafkaQueued_ != nullptr) {
    kafka = fmt::format(" | kafka delivered {} failed {} queued {}", kafkaDelivered_->get(),
                        kafkaFailed_->get(), kafkaQueued_->get());
    kafkaJson = fmt::format(R"(,"kafka_delivered":{},"kafka_failed":{},"kafka_queued":{})",
                            kafkaDelivered_->get(), kafkaFailed_->get(), kafkaQueued_->get());
  }
  json_ = fmt::format(R"({{"rx_mbps":{:.1f},"rx_kpps":{:.1f},"rx_packets":{},)"
                      R"("dropped_kernel":{},"dropped_truncated":{},"dropped_unread":{},)"
                      R"("rcvbuf_errors":{},"ring_full_waits":{}{}{}}})",
                      mbps, kpps, packets, kernel_.get(), truncated_.get(), unread_.get(),
                      rcvbufErrors_.get(), ringFullWaits_.get(), lossJson, kafkaJson);
  return fmt::format("rx {:.1f} Mb/s {:.1f} kpps ({} total){} | drops kernel {} trunc {} unread {} "
                     "| RcvbufErrors +{} | ring full {}x{}",
                     mbps, kpps, packets, loss, kernel_.get(), truncated_.get(), unread_.get(),
                     rcvbufErrors_.get(), ringFullWaits_.get(), kafka);
}

} // namespace efu
