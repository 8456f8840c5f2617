//===- MachineModel.cpp - The trn1/trn2/trn3 NeuronCore models -------------===//
//
// One function per target filling MachineModel from the public facts in
// shared/design/HARDWARE.md. Each constant names its source document.
//
//===----------------------------------------------------------------------===//

#include "machine/MachineModel.h"

namespace trnc {
namespace {

/// Values shared by every NeuronCore generation we model.
MachineModel commonModel() {
  MachineModel m;
  // 128 partitions of SBUF and PSUM on every generation. Source: NKI
  // architecture guides (Trainium/Inferentia2, Trainium2, Trainium3).
  m.numPartitions = 128;
  // PSUM 2 MiB = 128 partitions x 16 KiB = 8 banks x 2 KiB (512 fp32) per
  // partition. Source: NKI architecture guides, same on v2/v3/v4.
  m.psumPartitionBytes = 16 * 1024;
  m.psumBanks = 8;
  m.psumBankBytes = 2 * 1024;
  // nc_matmul limits: K <= 128 (partition dim of both inputs), M <= 128
  // (stationary free size), N <= 512 (moving free size). Source: NKI ISA
  // reference, nki.isa.nc_matmul; HARDWARE.md "Instructions" (v2/v3; the
  // same limit is kept for v4, the Trainium3 guide lists no larger one).
  m.matmulMaxK = 128;
  m.matmulMaxM = 128;
  m.matmulMaxN = 512;
  // Tensor Engine timing: 128x128 array; max(min(64, M), N) cycles, fp32 4x,
  // ~64-cycle start-up latency, stationary load up to 4x faster than a
  // multiply. Source: NKI architecture guides, NKI ISA reference
  // (nc_matmul), HARDWARE.md "Instructions" (same on every generation).
  m.tensorArrayRows = 128;
  m.tensorArrayCols = 128;
  m.matmulMinCycles = 64;
  m.matmulFp32Slowdown = 4;
  m.matmulStartupCycles = 64;
  m.stationaryLoadSpeedup = 4;
  // Warm-up throttle: ~50% at start, full after ~3 us, re-engaged after ~3 us
  // below 50% utilisation. Source: HARDWARE.md (NKI performance guide). Only
  // trn2/trn3 have it; trn1 turns it off below.
  m.tensorWarmupThrottle = true;
  m.warmupStartFraction = 0.5;
  m.warmupRampNs = 3000;
  m.warmupReengageNs = 3000;
  m.warmupReengageUtilisation = 0.5;
  // ~64-cycle minimum initiation interval (Vector/Scalar), ~60 cycles fixed
  // per access, innermost stride > 16 bytes halves SBUF/PSUM bandwidth.
  // Source: HARDWARE.md (NKI performance guide).
  m.minInitiationCycles = 64;
  m.accessOverheadCycles = 60;
  m.fastStrideBytes = 16;
  m.slowStrideFactor = 2;
  // GpSimd throughput is not documented in HARDWARE.md: one element per
  // partition per cycle, the baseline of the NKI ISA cost formulas.
  m.gpsimdElemsPerCycle = 128;
  // DMA: 16 engines x 16 queues per core, ~1.3 us fixed cost per transfer,
  // >= 2 KiB per row efficient, >= 4 KiB saturates. Source: HARDWARE.md, NKI
  // DMA overview and DMA bandwidth guide. r0 = 512 B is our fit of the knee
  // (see MachineModel.h).
  m.dmaEngines = 16;
  m.dmaQueuesPerEngine = 16;
  m.dmaFixedNs = 1300;
  m.dmaSaturateRowBytes = 4096;
  m.dmaRowOverheadBytes = 512;
  // Collective hop latencies: NeuronLink ~1-2 us (1.5 us used), EFA ~15 us.
  // Source: Neuron runtime docs, "Intra-node" / "Inter-node Collective
  // Communications with AWS Neuron".
  m.neuronLinkHopNs = 1500;
  m.efaHopNs = 15000;
  // LNC=2 on NeuronCore-v3/v4 (trn2, trn3); trn1 sets 1 below. Source:
  // Neuron "Logical NeuronCore configuration".
  m.maxLnc = 2;
  return m;
}

MachineModel trn1() {
  MachineModel m = commonModel();
  m.name = "trn1";
  // Source: "Trainium" page: 32 GiB HBM per chip.
  m.hbmBytes = 32ull << 30;
  // SBUF 24 MiB = 128 x 192 KiB. Source: "Trainium/Inferentia2 architecture"
  // guide, neuron-core-v2 page.
  m.sbufPartitionBytes = 192 * 1024;
  // Clocks. Source: "Trainium/Inferentia2 architecture" guide: Tensor Engine
  // 2.8 GHz, Vector Engine 1.12 GHz, Scalar and GpSimd 1.4 GHz.
  m.tensorClockGHz = 2.8;
  m.vectorClockGHz = 1.12;
  m.scalarClockGHz = 1.4;
  m.gpsimdClockGHz = 1.4;
  // Vector 128 elem/cycle, Scalar 128 elem/cycle, any dtype. Source:
  // "Trainium/Inferentia2 architecture" guide (HARDWARE.md "Targets").
  m.vectorElemsPerCycle16 = m.vectorElemsPerCycleOther = 128;
  m.scalarElemsPerCycle16 = m.scalarElemsPerCycleOther = 128;
  // No warm-up throttle on NeuronCore-v2. Source: HARDWARE.md ("Tensor
  // Engine warm-up on trn2/trn3").
  m.tensorWarmupThrottle = false;
  // Tensor Engine transposes are not bit-accurate for NaN/Inf on
  // NeuronCore-v2. Source: NKI ISA reference, nc_transpose.
  m.tensorTransposeBitExact = false;
  // Only LNC=1: a logical core is one physical core (NCC_EARG001 for any
  // other degree). Source: Neuron "Logical NeuronCore configuration".
  m.maxLnc = 1;
  // DMA engine 27.2 GB/s (NKI DMA overview, v2/v3; HARDWARE.md: ~23-27).
  m.dmaEngineGBps = 27.2;
  // 2 cores per chip sharing ~0.82 TB/s of HBM. Source: "Trainium" page.
  m.coresPerChip = 2;
  m.hbmChipGBps = 820;
  // Collectives: 16 chips per trn1.32xlarge over NeuronLink-v2 (a 4D
  // hypercube), 800 Gbps of EFA (Trn1 architecture page). The pages we
  // found give no NeuronLink-v2 bandwidth: assumed equal to trn2's per link
  // (320 GB/s), an upper bound; the hop latencies are the common ones.
  m.chipsPerInstance = 16;
  m.neuronLinkChipGBps = 1280;
  m.neuronLinkLinksPerChip = 4;
  m.efaInstanceGbps = 800;
  return m;
}

MachineModel trn2() {
  MachineModel m = commonModel();
  m.name = "trn2";
  // Source: "Trainium2" page: 96 GiB HBM per chip.
  m.hbmBytes = 96ull << 30;
  // SBUF 28 MiB = 128 x 224 KiB. Source: "Trainium2 architecture" guide,
  // neuron-core-v3 page.
  m.sbufPartitionBytes = 224 * 1024;
  // Clocks. Source: "Trainium2 architecture" guide: Tensor Engine 2.4 GHz,
  // Vector Engine 0.96 GHz, Scalar and GpSimd 1.2 GHz.
  m.tensorClockGHz = 2.4;
  m.vectorClockGHz = 0.96;
  m.scalarClockGHz = 1.2;
  m.gpsimdClockGHz = 1.2;
  // Vector 512 bf16/fp16 or 256 other elem/cycle; Scalar 128. Source:
  // "Trainium2 architecture" guide (HARDWARE.md "Targets").
  m.vectorElemsPerCycle16 = 512;
  m.vectorElemsPerCycleOther = 256;
  m.scalarElemsPerCycle16 = m.scalarElemsPerCycleOther = 128;
  // DMA engine 27.2 GB/s (NKI DMA overview, v2/v3; HARDWARE.md: ~23-27).
  m.dmaEngineGBps = 27.2;
  // 8 physical cores per chip sharing 2.9 TB/s of HBM. Source: "Trainium2"
  // page (another page says 3 TB/s; we use 2.9). The default logical core
  // is 2 physical cores (maxLnc); every constant here is one physical core's.
  m.coresPerChip = 8;
  m.hbmChipGBps = 2900;
  // Collectives: trn2.48xlarge, 16 chips in a 4 x 4 torus of NeuronLink-v3
  // (1.28 TB/s per chip, 4 links), 3.2 Tbps EFAv3. Sources: Trainium2
  // architecture page and NKI guide, "Best practices for training on AWS
  // Neuron" (trn2.48xlarge layout).
  m.chipsPerInstance = 16;
  m.neuronLinkChipGBps = 1280;
  m.neuronLinkLinksPerChip = 4;
  m.efaInstanceGbps = 3200;
  return m;
}

MachineModel trn3() {
  MachineModel m = commonModel();
  m.name = "trn3";
  // Source: "Trainium3" page: 144 GiB HBM per chip.
  m.hbmBytes = 144ull << 30;
  // SBUF 32 MiB = 128 x 256 KiB. Source: "Trainium3 architecture" guide,
  // neuron-core-v4 page.
  m.sbufPartitionBytes = 256 * 1024;
  // Clocks. Source: "Trainium3 architecture" guide: Tensor Engine 2.4 GHz,
  // Vector Engine 1.2 GHz, Scalar and GpSimd 1.2 GHz.
  m.tensorClockGHz = 2.4;
  m.vectorClockGHz = 1.2;
  m.scalarClockGHz = 1.2;
  m.gpsimdClockGHz = 1.2;
  // Vector 512 / 256 elem/cycle; Scalar 256 bf16 / 128 other. Source:
  // "Trainium3 architecture" guide (HARDWARE.md "Targets").
  m.vectorElemsPerCycle16 = 512;
  m.vectorElemsPerCycleOther = 256;
  m.scalarElemsPerCycle16 = 256;
  m.scalarElemsPerCycleOther = 128;
  // DMA engine 38.4 GB/s on NeuronCore-v4 (NKI DMA overview; HARDWARE.md's
  // ~23-27 GB/s is the v2/v3 figure).
  m.dmaEngineGBps = 38.4;
  // 8 cores per chip sharing 4.9 TB/s of HBM. Source: "Trainium3" page
  // (another page says 4.7 TB/s; we use 4.9).
  m.coresPerChip = 8;
  m.hbmChipGBps = 4900;
  // Collectives: NeuronLink-v4 2.56 TB/s per device (Trainium3 page); its
  // link count is not given there, assumed 4 as on Trainium2; 16 chips and
  // 3.2 Tbps of EFA per instance assumed as on trn2.48xlarge.
  m.chipsPerInstance = 16;
  m.neuronLinkChipGBps = 2560;
  m.neuronLinkLinksPerChip = 4;
  m.efaInstanceGbps = 3200;
  return m;
}

} // namespace

std::optional<MachineModel> lookupMachineModel(std::string_view name) {
  if (name == "trn1")
    return trn1();
  if (name == "trn2")
    return trn2();
  if (name == "trn3")
    return trn3();
  return std::nullopt;
}

std::vector<std::string> knownTargets() {
  // Default (trn2) first, then the others in generation order.
  return {std::string(kDefaultTarget), "trn1", "trn3"};
}

std::string knownTargetNames() {
  std::string known;
  for (const std::string &name : knownTargets())
    known += (known.empty() ? "" : ", ") + name;
  return known;
}

} // namespace trnc
