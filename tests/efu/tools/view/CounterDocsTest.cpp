// SPDX-License-Identifier: BSD-2-Clause
// efu-view's counter docs: the rows of docs/counters.md (embedded at build time), placeholder
// matching, and which documented counters count a loss (every one decided here).
#include "efu/tools/view/ViewState.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using efu::tools::view::CounterDocs;
using efu::tools::view::isLossCounter;

TEST(ViewCounterDocs, ParsesRowsWhoseFirstCellIsOneBackQuotedName) {
  const auto docs = CounterDocs::parse("# Title\n"
                                       "| where | name form | example |\n"
                                       "|---|---|---|\n"
                                       "| control port (`STAT_GET`) | `<name>` | `x` |\n"
                                       "| `a.b` | counter | datagrams | dropped by `x` |\n"
                                       "  | `q<i>.c` | gauge | % | per queue |  \n"
                                       "| `two words` | counter | x | not a name |\n"
                                       "| `short` | counter |\n"
                                       "text with | bars | in it\n");
  ASSERT_EQ(docs.rows().size(), 2U);
  EXPECT_EQ(docs.rows()[0].pattern, "a.b");
  EXPECT_EQ(docs.rows()[0].kind, "counter");
  EXPECT_EQ(docs.rows()[0].unit, "datagrams");
  EXPECT_EQ(docs.rows()[0].meaning, "dropped by `x`");
  EXPECT_EQ(docs.rows()[1].pattern, "q<i>.c");
  EXPECT_EQ(docs.rows()[1].unit, "%");
}

TEST(ViewCounterDocs, PlaceholdersMatchWithinOneSegment) {
  const auto &docs = CounterDocs::embedded();
  const auto pattern = [&docs](const char *name) {
    const auto *row = docs.find(name);
    return row == nullptr ? std::string("(none)") : row->pattern;
  };
  EXPECT_EQ(pattern("receive.dropped"), "receive.dropped");
  EXPECT_EQ(pattern("receive.q0.dropped"), "receive.q<i>.dropped");
  EXPECT_EQ(pattern("receive.q12.packets"), "receive.q<i>.packets");
  EXPECT_EQ(pattern("thread.rx1.cpu_pct"), "thread.<t>.cpu_pct");
  EXPECT_EQ(pattern("thread.proc.cpu_sys_pct"), "thread.<t>.cpu_sys_pct");
  EXPECT_EQ(pattern("parser.essheader.oq.07.packets"), "parser.essheader.oq.<NN>.packets");
  EXPECT_EQ(pattern("serialize.cbm_1.histograms_refused"), "serialize.<s>.histograms_refused");
  EXPECT_EQ(pattern("thread.processing_idle"), "thread.processing_idle");
  EXPECT_EQ(pattern("receive.q.packets"), "(none)");   // a placeholder takes one character or more
  EXPECT_EQ(pattern("thread.rx.0.cpu_pct"), "(none)"); // and no dot
  EXPECT_EQ(pattern("receive.dropped.more"), "(none)");
  EXPECT_EQ(pattern("no.such.counter"), "(none)");
  const auto *row = docs.find("receive.dropped");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->kind, "counter");
  EXPECT_EQ(row->unit, "datagrams");
  EXPECT_NE(row->meaning.find("receive buffer was full"), std::string::npos);
}

TEST(ViewCounterDocs, TheEmbeddedRowsAreThoseOfDocsCountersMd) {
  std::ifstream file(std::string(EFU_SOURCE_DIR) + "/docs/counters.md");
  ASSERT_TRUE(file) << "docs/counters.md";
  std::stringstream text;
  text << file.rdbuf();
  const auto now = CounterDocs::parse(text.str());
  const auto &embedded = CounterDocs::embedded();
  ASSERT_GT(now.rows().size(), 200U);
  ASSERT_EQ(embedded.rows().size(), now.rows().size()) << "rebuild: the embedded copy is stale";
  for (size_t i = 0; i < now.rows().size(); ++i) {
    EXPECT_EQ(embedded.rows()[i].pattern, now.rows()[i].pattern);
    EXPECT_EQ(embedded.rows()[i].meaning, now.rows()[i].meaning);
  }
}

// Every documented counter that counts a loss, decided by reading its meaning in
// docs/counters.md; every other documented counter is not one. A new counter fails this test
// until it is put here or left out on purpose. Not losses, among those named like one:
// control.* and metrics.* (their clients' bad requests, not efu's data), receive.ring_full_waits
// and kafka.queue_full_retries (waits), parser.readout.errors.no_data (heartbeats),
// geometry.adc_errors and readouts.adc_below_* (ADC threshold cuts), the event-formation cuts
// (cluster.no_coincidence, spans, wire/strip gaps, cluster.split_discarded, cluster sizes),
// geometry.pos_low/high (clamped, kept), events.timestamp.tof.negative (measured from the
// previous pulse instead), the sequences' reordered/restarts/stale/duplicates/sources_overflow,
// cluster.bound.time_back/pulse_back (restarts: what waited is formed), events.unpublished
// (--no-kafka on purpose).
constexpr const char *kLosses = R"(
bwec.geometry.cassette_id_errors bwec.geometry.max_sector_errors bwec.geometry.sumo_id_errors
fwec.geometry.cassette_id_errors fwec.geometry.max_sector_errors fwec.geometry.sumo_id_errors
hr.geometry.index_errors sans.geometry.index_errors
padetector.geometry.cassette_id_errors padetector.geometry.max_sector_errors
cluster.bound.event_hits cluster.bound.full cluster.bound.open_hits cluster.bound.stale
events.pixel_errors events.timestamp.prevtof.high events.timestamp.prevtof.negative
events.timestamp.tof.high
geometry.ampl_high geometry.ampl_low geometry.ampl_zero geometry.calib_group_errors
geometry.config_errors geometry.fen_errors geometry.globalpos_invalid geometry.group_errors
geometry.hybrid_mapping_errors geometry.invalid_xcoord_error geometry.invalid_ycoord_error
geometry.monitor_ring_mismatch_errors geometry.outside_tube geometry.pixel_errors
geometry.ring_errors geometry.ring_mapping_errors geometry.row_invalid
geometry.strip_channel_range_errors geometry.topology_errors geometry.type_mismatch_errors
geometry.unitid_invalid geometry.validation_errors geometry.wire_channel_range_errors
geometry.xpos_errors geometry.ypos_errors
graphite.dropped graphite.failures log.reopen_failures
handlers.pixelevent.invalid_pixel_readout handlers.pixelevent.no_global_time_error
handlers.timeingevent.miss_evr_count handlers.timeingevent.miss_tdc_count
kafka.ar51.dropped kafka.da00.invalid kafka.discarded kafka.errors kafka.failed
kernel.udp.rcvbuf_errors
parser.essheader.errors.buffer parser.essheader.errors.cookie
parser.essheader.errors.even_fibre_sync parser.essheader.errors.odd_fibre_sync
parser.essheader.errors.output_queue parser.essheader.errors.pad
parser.essheader.errors.prev_timefrac parser.essheader.errors.size
parser.essheader.errors.time_status parser.essheader.errors.timefrac
parser.essheader.errors.timehigh parser.essheader.errors.timing parser.essheader.errors.type
parser.essheader.errors.version parser.essheader.seq.lost
parser.readout.error_datlen_invalid parser.readout.error_datlen_mismatch
parser.readout.error_headersize parser.readout.error_ringfen parser.readout.errors.datalen
parser.readout.errors.fen parser.readout.errors.fiber parser.readout.errors.size
parser.readout.errors.timefrac parser.readout.errors.type
perfgen.skipped_batches perfgen.skipped_events
readouts.error_adc readouts.error_bc readouts.error_buffer readouts.error_channel
readouts.error_coordinate readouts.error_datalen readouts.error_fen readouts.error_fiber
readouts.error_mapping readouts.error_size readouts.error_timefrac readouts.error_vmm
readouts.errors.position readouts.errors.short readouts.errors.size
readouts.evr.evr_readout_dropped readouts.tdc.tdc_readout_dropped readouts.time_far
receive.dropped receive.errors receive.q<i>.dropped receive.truncated receive.unread
serialize.<s>.histograms_refused serialize.<s>.tof_before_offset_dropped
serialize.<s>.tof_over_max_dropped
udp.loss.burst_max udp.loss.bursts udp.loss.period udp.seq.lost
)";

/// Distinct counter names in docs/counters.md when kLosses was decided.
constexpr size_t kDocumentedCounters = 261;

TEST(ViewCounterDocs, EveryDocumentedCounterIsDecidedLossOrNot) {
  std::set<std::string> losses;
  std::istringstream words(kLosses);
  for (std::string name; words >> name;) {
    losses.insert(name);
  }
  std::set<std::string> documented;
  for (const auto &row : CounterDocs::embedded().rows()) {
    documented.insert(row.pattern);
    EXPECT_EQ(isLossCounter(row.pattern), losses.contains(row.pattern))
        << row.pattern << ": " << row.meaning;
  }
  for (const auto &name : losses) {
    EXPECT_TRUE(documented.contains(name)) << name << " is in the list but not documented";
  }
  // A counter documented since this list was written may be a loss the rule misses: decide,
  // put it in kLosses if it is one, then count it here.
  EXPECT_EQ(documented.size(), kDocumentedCounters)
      << "docs/counters.md names another set of counters: is each new one a loss?";
  // With the placeholders filled in, as the f144 names come.
  EXPECT_TRUE(isLossCounter("receive.q3.dropped"));
  EXPECT_TRUE(isLossCounter("serialize.cbm1.tof_over_max_dropped"));
  EXPECT_FALSE(isLossCounter("receive.ring_full_waits"));
  EXPECT_FALSE(isLossCounter("thread.rx0.cpu_pct"));
}

} // namespace
