//===- MachineModel.h - NeuronCore targets (trn1, trn2, trn3) -----*- C++ -*-===//
//
// The constants that describe one NeuronCore: memory geometry the compiler
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

  // --- Clocks (GHz); used by the timed simulator --------------------------
  // Source: HARDWARE.md "Targets" table (NKI architecture guides).
  double tensorClockGHz = 2.4;
  double vectorClockGHz = 0.96;
  double scalarClockGHz = 1.2;
  double gpsimdClockGHz = 1.2;

  uint64_t sbufBytes() const { return sbufPartitionBytes * numPartitions; }
  uint64_t psumBytes() const { return psumPartitionBytes * numPartitions; }
};

/// The model for `name` ("trn1", "trn2", "trn3"), or nullopt if unknown.
std::optional<MachineModel> lookupMachineModel(std::string_view name);

/// Names of every known target, default first.
std::vector<std::string> knownTargets();

constexpr std::string_view kDefaultTarget = "trn2";

} // namespace trnc
