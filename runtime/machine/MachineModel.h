//===- MachineModel.h - NeuronCore targets (trn1, trn2, trn3) -----*- C++ -*-===//
//
// The constants that describe one physical NeuronCore: memory geometry the compiler
// must respect and the simulator must enforce, and the engine clocks and
// throughputs the timed simulator uses. Every value cites its source; see
// shared/design/HARDWARE.md for the document list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnc {

struct MachineModel {
  std::string name; // "trn1" | "trn2" | "trn3"

  // --- Memory geometry ---------------------------------------------------
  // Partitions of SBUF and PSUM. Source: NKI architecture guides (all targets).
  unsigned numPartitions = 128;
  // SBUF bytes per partition. Source: Trainium{,2,3} architecture guides:
  // trn1 24 MiB = 128 x 192 KiB, trn2 28 MiB = 128 x 224 KiB,
  // trn3 32 MiB = 128 x 256 KiB.
  uint64_t sbufPartitionBytes = 224 * 1024;
  // PSUM: 2 MiB = 128 partitions x 16 KiB = 8 banks x 2 KiB. Source: NKI
  // architecture guides (same on every target).
  uint64_t psumPartitionBytes = 16 * 1024;
  unsigned psumBanks = 8;
  uint64_t psumBankBytes = 2 * 1024;

  // HBM per chip: no region may be larger. Source: Trainium{,2,3} pages:
  // trn1 32 GiB, trn2 96 GiB, trn3 144 GiB.
  uint64_t hbmBytes = 96ull << 30;

  // --- Tensor Engine matmul limits (nki.isa.nc_matmul) --------------------
  unsigned matmulMaxK = 128;      // contraction = partition dim of both inputs
  unsigned matmulMaxM = 128;      // stationary free size
  unsigned matmulMaxN = 512;      // moving free size (v2/v3)

  // A transpose matmul (isa kFlagTranspose: stationary data, identity
  // moving) is bit-accurate from NeuronCore-v3 (trn2) on; on NeuronCore-v2
  // (trn1) it is an ordinary product, so a NaN/Inf in a row spreads through
  // its block (0 * Inf = NaN). Source: NKI ISA reference, nc_transpose.
  bool tensorTransposeBitExact = true;

  // --- Clocks (GHz); used by the timed simulator --------------------------
  // Source: HARDWARE.md "Targets" table (NKI architecture guides).
  double tensorClockGHz = 2.4;
  double vectorClockGHz = 0.96;
  double scalarClockGHz = 1.2;
  double gpsimdClockGHz = 1.2;

  // --- Tensor Engine timing (sim/CostModel.cpp) ---------------------------
  // 128x128 systolic array. Source: NKI architecture guides.
  unsigned tensorArrayRows = 128;
  unsigned tensorArrayCols = 128;
  // matmul cost max(min(64, M), N) cycles for bf16/fp16/fp8: the min(64, M)
  // term is the stationary load, overlapped with the previous multiply.
  // Source: NKI ISA reference (nc_matmul), HARDWARE.md "Instructions".
  unsigned matmulMinCycles = 64;
  // fp32 runs at 1/4 of the bf16 rate. Source: HARDWARE.md (Targets: "1/4 of
  // that fp32"; Instructions: "4x for fp32").
  unsigned matmulFp32Slowdown = 4;
  // ~64 cycles of start-up latency, paid when the array was idle before the
  // matmul (back-to-back matmuls pipeline it). Source: HARDWARE.md.
  unsigned matmulStartupCycles = 64;
  // Loading the stationary operand is up to 4x faster than a multiply of the
  // same size: M/4 cycles for M stationary columns, i.e. <= 32 <= 64, which
  // is why the cost formula's min(64, M) term hides it. Source: HARDWARE.md.
  unsigned stationaryLoadSpeedup = 4;
  // Warm-up throttle (trn2/trn3 only): starts at ~50% of peak, ramps to full
  // over ~3 us, re-engages when utilisation stays below 50% for ~3 us.
  // Source: HARDWARE.md "Other documented behaviour" (NKI performance guide).
  bool tensorWarmupThrottle = true;
  double warmupStartFraction = 0.5;
  double warmupRampNs = 3000;
  double warmupReengageNs = 3000;
  double warmupReengageUtilisation = 0.5;

  // --- Vector / Scalar / GpSimd throughput --------------------------------
  // Elements per cycle over all partitions, for 2-byte float (bf16/fp16)
  // operands and for any other dtype. Source: HARDWARE.md "Targets".
  unsigned vectorElemsPerCycle16 = 512;
  unsigned vectorElemsPerCycleOther = 256;
  unsigned scalarElemsPerCycle16 = 128;
  unsigned scalarElemsPerCycleOther = 128;
  // HARDWARE.md gives no GpSimd throughput; assumed one element per
  // partition per cycle (128), the baseline the NKI ISA cost formulas use.
  unsigned gpsimdElemsPerCycle = 128;
  // ~64-cycle minimum initiation interval on Vector/Scalar (applied to
  // GpSimd too). Source: HARDWARE.md "Other documented behaviour".
  unsigned minInitiationCycles = 64;
  // ~60 cycles of fixed overhead per instruction access to SBUF/PSUM.
  // Source: HARDWARE.md "How a core executes" (NKI performance guide). With
  // the 64-cycle interval this gives ~124 cycles per tiny instruction, in
  // line with the "~100 cycles of static overhead between back-to-back tiny
  // dependent instructions" of the same guide.
  unsigned accessOverheadCycles = 60;
  // An innermost stride above 16 bytes halves the SBUF/PSUM interface
  // bandwidth. Source: HARDWARE.md "How a core executes".
  unsigned fastStrideBytes = 16;
  unsigned slowStrideFactor = 2;

  // --- DMA -----------------------------------------------------------------
  // 16 DMA engines per core, 16 queues each. Source: HARDWARE.md (NKI DMA
  // overview). The ISA exposes 16 queues per program (dmaQueue 0..15).
  unsigned dmaEngines = 16;
  unsigned dmaQueuesPerEngine = 16;
  // ~1.3 us fixed cost per transfer, from semaphore to start. Source:
  // HARDWARE.md (NKI DMA overview). (The ~600 ns of a descriptor-generated
  // DMA on v3 is not modelled: our DMAs use static descriptors.)
  double dmaFixedNs = 1300;
  // Per-engine bandwidth. HARDWARE.md: ~23-27 GB/s; NKI DMA overview: 27.2
  // GB/s on NeuronCore-v2/v3, 38.4 GB/s on v4. We use the overview's figures.
  double dmaEngineGBps = 27.2;
  // Efficiency knee by contiguous bytes per row (descriptor): >= 2 KiB to be
  // efficient, >= 4 KiB to saturate. Source: HARDWARE.md, NKI DMA bandwidth
  // guide. Modelled as a per-descriptor overhead worth dmaRowOverheadBytes,
  // normalised to 1 at the saturation size: eff(r) = min(1, (r / (r + r0)) /
  // (S / (S + r0))), S = 4 KiB, r0 = 512 B (our fit: eff(2 KiB) = 0.9,
  // eff(512 B) = 0.5625, eff(64 B) = 0.125).
  uint64_t dmaSaturateRowBytes = 4096;
  uint64_t dmaRowOverheadBytes = 512;

  // --- HBM -------------------------------------------------------------------
  // Cores per chip and chip HBM bandwidth; a core's share is their ratio.
  // Source: HARDWARE.md "Targets" (Trainium{,2,3} pages).
  unsigned coresPerChip = 8;
  double hbmChipGBps = 2900;

  // --- Logical NeuronCores ------------------------------------------------------
  // Largest logical-core degree: physical cores one program may span. trn1
  // supports only LNC=1 (compiler error NCC_EARG001); trn2 and trn3 group
  // two physical cores that share HBM (LNC=2, trn2's default). Source:
  // Neuron "Logical NeuronCore configuration", NKI "Using Logical
  // NeuronCores". Every other constant here stays per *physical* core; a
  // logical core of degree d has d x the engines, SBUF, PSUM, DMA engines
  // and HBM share.
  unsigned maxLnc = 2;
  // Cost of a cross-core barrier (both physical cores of a logical core
  // signal the peer's barrier semaphore and wait for it). No public figure
  // was found: it is charged as one DMA fixed cost (dmaFixedNs), since a
  // semaphore write to the peer core is a descriptor on a DMA queue. An
  // assumption, not a measurement (docs/distributed.md, "LNC=2").
  double barrierNs() const { return dmaFixedNs; }

  // --- Collectives (sim/Collectives.cpp) --------------------------------------
  // One rank = one logical core (one physical core at LNC=1, two at LNC=2);
  // ranks fill the cores of a chip, then the chips of an instance
  // (coresPerChip above), then instances.
  // Chips per instance: trn1.32xlarge and trn2.48xlarge have 16 (Trn1 /
  // Trn2 architecture pages; trn2: a 4 x 4 2D torus of NeuronLink-v3).
  unsigned chipsPerInstance = 16;
  // Cores of one chip exchange through device HBM with the chip's DMA
  // engines ("DMA engines to move data within and across devices",
  // Trainium2 architecture guide for NKI): a ring step there costs the DMA
  // fixed cost (dmaFixedNs) and runs at the core's DMA bandwidth.
  // NeuronLink between chips of an instance: ~1-2 us per hop (Neuron
  // runtime docs, "Intra-node Collective Communications with AWS Neuron";
  // we use 1.5 us), and the chip's NeuronLink bandwidth split over its
  // links (a ring uses one link each way): trn2 NeuronLink-v3 1.28 TB/s
  // per chip over 4 links (Trainium2 architecture page and guide).
  double neuronLinkHopNs = 1500;
  double neuronLinkChipGBps = 1280;
  unsigned neuronLinkLinksPerChip = 4;
  // EFA between instances: ~15 us per hop (Neuron runtime docs,
  // "Inter-node Collective Communications with AWS Neuron"), the instance's
  // EFA bandwidth shared by its chips: trn2.48xlarge 3.2 Tbps (EFAv3),
  // trn1.32xlarge 800 Gbps (Trn1 architecture page).
  double efaHopNs = 15000;
  double efaInstanceGbps = 3200;

  uint64_t sbufBytes() const { return sbufPartitionBytes * numPartitions; }
  uint64_t psumBytes() const { return psumPartitionBytes * numPartitions; }
  /// Tensor Engine peak per core: rows * cols * 2 FLOP * clock (bf16 rate).
  double tensorPeakFlopsPerSecond() const {
    return double(tensorArrayRows) * tensorArrayCols * 2 * tensorClockGHz * 1e9;
  }
  /// This core's share of the chip's HBM bandwidth, bytes/s.
  double hbmCoreBytesPerSecond() const { return hbmChipGBps * 1e9 / coresPerChip; }
  /// All DMA engines of the core together, bytes/s.
  double dmaCoreBytesPerSecond() const { return dmaEngines * dmaEngineGBps * 1e9; }
  /// GB/s one NeuronLink ring direction gets: the chip's links split.
  double neuronLinkRingGBps() const {
    return neuronLinkChipGBps / neuronLinkLinksPerChip;
  }
  /// GB/s of EFA one chip's ring gets (instance Gbit/s, shared by chips).
  double efaChipGBps() const { return efaInstanceGbps / 8 / chipsPerInstance; }
  /// Ranks (logical cores) one chip holds at logical-core degree `lnc`: a
  /// trn2 chip's 8 physical cores are 4 ranks at LNC=2.
  unsigned ranksPerChip(unsigned lnc = 1) const {
    return coresPerChip / (lnc ? lnc : 1);
  }
  /// The HBM bandwidth of one logical core of degree `lnc` (its physical
  /// cores' shares together), bytes/s.
  double hbmLogicalCoreBytesPerSecond(unsigned lnc = 1) const {
    return hbmCoreBytesPerSecond() * lnc;
  }
  /// The chip and instance of rank `r` at degree `lnc` (ranks fill the
  /// logical cores of a chip, then chips, then instances).
  unsigned chipOfRank(int64_t r, unsigned lnc = 1) const {
    return unsigned(r / ranksPerChip(lnc));
  }
  unsigned instanceOfRank(int64_t r, unsigned lnc = 1) const {
    return unsigned(r / (int64_t(ranksPerChip(lnc)) * chipsPerInstance));
  }
};

/// The model for `name` ("trn1", "trn2", "trn3"), or nullopt if unknown.
std::optional<MachineModel> lookupMachineModel(std::string_view name);

/// Names of every known target, default first.
std::vector<std::string> knownTargets();
/// The same as one string for messages: "trn2, trn1, trn3".
std::string knownTargetNames();

constexpr std::string_view kDefaultTarget = "trn2";

} // namespace trnc
