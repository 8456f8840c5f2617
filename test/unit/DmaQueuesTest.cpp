//===- DmaQueuesTest.cpp - DMA queues sharing the core's bandwidth -------===//
//
// The fluid DMA model: a lone transfer runs at its own rate after the fixed
// cost, transfers moving bytes together share the caps max-min fairly and
// are re-rated when one starts or ends, a queue serialises its transfers,
// and the rates in flight never sum above the DMA or HBM cap.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "sim/DmaQueues.h"

#include <cmath>
#include <vector>

using trnc::sim::DmaDone;
using trnc::sim::DmaQueues;
using trnc::sim::DmaTransfer;

namespace {
bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, b); }

DmaTransfer transfer(uint32_t index, double at, uint64_t bytes, double rate,
                     uint8_t hbmSides = 1) {
  DmaTransfer t;
  t.index = index;
  t.issueNs = t.dispatchNs = at;
  t.bytes = bytes;
  t.aloneBytesPerNs = rate;
  t.hbmSides = hbmSides;
  return t;
}

std::vector<DmaDone> drain(DmaQueues &q) {
  std::vector<DmaDone> done;
  q.advanceTo(1e12, done);
  return done;
}
} // namespace

TEST_CASE("a lone transfer: fixed cost, then its own rate", "[dma]") {
  DmaQueues q(/*fixed=*/100, /*dma=*/400, /*hbm=*/300);
  q.dispatch(0, transfer(0, 0, 20000, 200));
  CHECK(near(q.nextEventNs(), 100)); // the data phase starts
  std::vector<DmaDone> done = drain(q);
  REQUIRE(done.size() == 1);
  CHECK(near(done[0].startNs, 0));
  CHECK(near(done[0].endNs, 100 + 20000 / 200.0));
}

TEST_CASE("transfers moving together share the cap fairly", "[dma]") {
  DmaQueues q(0, 400, 300);
  q.dispatch(0, transfer(0, 0, 30000, 200));
  q.dispatch(1, transfer(1, 0, 30000, 200));
  std::vector<DmaDone> done = drain(q);
  REQUIRE(done.size() == 2);
  // HBM: 150 each (not 200 + 200 = 400 > 300): both end at 200 ns.
  CHECK(near(done[0].endNs, 200));
  CHECK(near(done[1].endNs, 200));
}

TEST_CASE("a transfer that starts later slows the running one, which "
          "speeds up again when it ends", "[dma]") {
  DmaQueues q(0, 400, 300);
  q.dispatch(0, transfer(0, 0, 60000, 300)); // alone: the whole HBM share
  std::vector<DmaDone> done;
  q.advanceTo(100, done); // 30000 bytes moved
  q.dispatch(1, transfer(1, 100, 3000, 300));
  done = drain(q);
  REQUIRE(done.size() == 2);
  // From 100 ns each moves 150 B/ns: the small one ends at 120 ns, then the
  // big one (27000 left) runs at 300 again: 90 ns more.
  CHECK(done[0].transfer.index == 1);
  CHECK(near(done[0].endNs, 120));
  CHECK(near(done[1].endNs, 210));
}

TEST_CASE("an HBM -> HBM copy counts twice against the HBM cap", "[dma]") {
  // It reads and writes HBM: alone it moves at most half the HBM cap.
  DmaQueues q(0, 400, 300);
  q.dispatch(0, transfer(0, 0, 30000, 400, /*hbmSides=*/2));
  std::vector<DmaDone> done = drain(q);
  REQUIRE(done.size() == 1);
  CHECK(near(done[0].endNs, 30000 / 150.0));
  // Beside a load: fair shares of the rate, 100 B/ns each (the copy's 100
  // takes 200 of HBM, the load's 100 the rest).
  DmaQueues r(0, 400, 300);
  r.dispatch(0, transfer(0, 0, 10000, 400, /*hbmSides=*/2));
  r.dispatch(1, transfer(1, 0, 10000, 400));
  done = drain(r);
  REQUIRE(done.size() == 2);
  CHECK(near(done[0].endNs, 100));
  CHECK(near(done[1].endNs, 100));
}

TEST_CASE("a queue serialises its transfers", "[dma]") {
  DmaQueues q(50, 400, 300);
  q.dispatch(3, transfer(0, 0, 1000, 100));
  q.dispatch(3, transfer(1, 0, 1000, 100));
  std::vector<DmaDone> done = drain(q);
  REQUIRE(done.size() == 2);
  CHECK(near(done[0].endNs, 60));
  CHECK(near(done[1].startNs, 60));
  CHECK(near(done[1].endNs, 120));
}

TEST_CASE("sixteen queues never exceed the HBM cap; on-chip transfers "
          "use what HBM leaves of the DMA bandwidth", "[dma]") {
  DmaQueues q(0, 400, 300);
  for (uint32_t i = 0; i < 15; ++i)
    q.dispatch(i, transfer(i, 0, 65536, 60));
  q.dispatch(15, transfer(15, 0, 65536, 300, /*hbmSides=*/0));
  std::vector<DmaDone> done = drain(q);
  REQUIRE(done.size() == 16);
  double hbmEnd = 0, onChipEnd = 0;
  for (const DmaDone &d : done)
    (d.transfer.hbmSides ? hbmEnd : onChipEnd) =
        std::max(d.transfer.hbmSides ? hbmEnd : onChipEnd, d.endNs);
  // 15 HBM transfers: 20 B/ns each (300 / 15), 983040 bytes at 300 B/ns.
  CHECK(near(hbmEnd, 15.0 * 65536 / 300));
  // The on-chip one gets the DMA's remaining 100 B/ns.
  CHECK(near(onChipEnd, 65536 / 100.0));
}

TEST_CASE("two physical cores: own DMA caps, one shared HBM cap", "[dma][lnc]") {
  // Each core's DMA moves at most 400 B/ns; HBM traffic of both shares 600.
  DmaQueues q(0, 400, 600, /*cores=*/2);
  auto on = [](DmaTransfer t, uint8_t core) {
    t.core = core;
    return t;
  };
  // Core 0: two HBM transfers (its DMA cap 400 binds: 200 each); core 1:
  // one HBM transfer. HBM 600 over three: 200 each, all within the caps.
  q.dispatch(0, on(transfer(0, 0, 40000, 1000), 0));
  q.dispatch(1, on(transfer(1, 0, 40000, 1000), 0));
  q.dispatch(0, on(transfer(2, 0, 40000, 1000), 1)); // core 1's queue 0
  std::vector<DmaDone> done = drain(q);
  REQUIRE(done.size() == 3);
  for (const DmaDone &d : done)
    CHECK(near(d.endNs, 200));
  // Without HBM (SBUF to SBUF), each core reaches its own DMA cap: core 1's
  // lone transfer runs at 400 while core 0's two share 400.
  DmaQueues r(0, 400, 600, 2);
  r.dispatch(0, on(transfer(0, 0, 40000, 1000, 0), 0));
  r.dispatch(1, on(transfer(1, 0, 40000, 1000, 0), 0));
  r.dispatch(0, on(transfer(2, 0, 40000, 1000, 0), 1));
  done = drain(r);
  REQUIRE(done.size() == 3);
  CHECK(near(done[0].endNs, 100)); // core 1's, alone on its DMA
  CHECK(done[0].transfer.index == 2);
  CHECK(near(done[1].endNs, 200));
  CHECK(near(done[2].endNs, 200));
}
