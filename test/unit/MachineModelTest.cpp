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
