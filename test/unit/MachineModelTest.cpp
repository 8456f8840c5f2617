//===- MachineModelTest.cpp - trn1/trn2/trn3 constants ----------------------===//
//
// The geometry and clocks of each target as HARDWARE.md lists them.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace trnc;

TEST_CASE("machine models match HARDWARE.md", "[machine]") {
  auto t1 = lookupMachineModel("trn1"), t2 = lookupMachineModel("trn2"),
       t3 = lookupMachineModel("trn3");
  REQUIRE(t1);
  REQUIRE(t2);
  REQUIRE(t3);
  CHECK(t1->sbufPartitionBytes == 192 * 1024);
  CHECK(t2->sbufPartitionBytes == 224 * 1024);
  CHECK(t3->sbufPartitionBytes == 256 * 1024);
  CHECK(t1->sbufBytes() == 24ull << 20);
  CHECK(t2->sbufBytes() == 28ull << 20);
  CHECK(t3->sbufBytes() == 32ull << 20);
  for (const auto &m : {*t1, *t2, *t3}) {
    CHECK(m.numPartitions == 128);
    CHECK(m.psumPartitionBytes == 16 * 1024);
    CHECK(m.psumBanks * m.psumBankBytes == m.psumPartitionBytes);
    CHECK(m.psumBytes() == 2ull << 20);
    CHECK(m.matmulMaxN == 512);
  }
  CHECK(t1->tensorClockGHz == 2.8);
  CHECK(t1->vectorClockGHz == 1.12);
  CHECK(t1->scalarClockGHz == 1.4);
  CHECK(t2->tensorClockGHz == 2.4);
  CHECK(t2->vectorClockGHz == 0.96);
  CHECK(t2->gpsimdClockGHz == 1.2);
  CHECK(t3->vectorClockGHz == 1.2);
  CHECK(t1->name == "trn1");
  CHECK_FALSE(lookupMachineModel("trn9"));
  auto names = knownTargets();
  REQUIRE(names.size() == 3);
  CHECK(names[0] == kDefaultTarget);
}

TEST_CASE("logical cores: maxLnc per target, ranks per chip at lnc", "[machine]") {
  auto t1 = lookupMachineModel("trn1"), t2 = lookupMachineModel("trn2"),
       t3 = lookupMachineModel("trn3");
  REQUIRE((t1 && t2 && t3));
  CHECK(t1->maxLnc == 1);
  CHECK(t2->maxLnc == 2);
  CHECK(t3->maxLnc == 2);
  // A trn2 chip's 8 physical cores are 8 ranks at LNC=1, 4 at LNC=2.
  CHECK(t2->ranksPerChip(1) == 8);
  CHECK(t2->ranksPerChip(2) == 4);
  CHECK(t2->chipOfRank(7) == 0);
  CHECK(t2->chipOfRank(7, 2) == 1);
  CHECK(t2->chipOfRank(3, 2) == 0);
  CHECK(t2->instanceOfRank(127) == 0);
  CHECK(t2->instanceOfRank(64, 2) == 1);
  CHECK(t2->instanceOfRank(63, 2) == 0);
  // Constants stay per physical core; a logical core has lnc x the HBM share.
  CHECK(t2->hbmLogicalCoreBytesPerSecond(2) == 2 * t2->hbmCoreBytesPerSecond());
  CHECK(t2->hbmLogicalCoreBytesPerSecond(1) == t2->hbmCoreBytesPerSecond());
  // The barrier is charged one DMA fixed cost (no public figure found).
  CHECK(t2->barrierNs() == t2->dmaFixedNs);
}
