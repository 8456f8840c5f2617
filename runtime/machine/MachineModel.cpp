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

} // namespace trnc
