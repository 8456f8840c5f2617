//===- NisaToIsa.h - what a nisa instruction is in the ISA -------*- C++ -*-===//
//
// The one mapping from nisa ops to isa::Instruction fields, shared by the
// emitter (which adds addresses, regions, waits and signals) and by the
// passes that need an instruction's cost before anything has an address
// (the list scheduler asks the simulator's cost formulas, sim/CostModel.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Nisa/NisaOps.h"

#include "isa/Isa.h"

#include <optional>
#include <string>

namespace trnc::nisa {

/// The ISA dtype of a nisa element type, if it has one.
std::optional<isa::DType> isaDTypeOf(mlir::Type elementType);

/// The element type of a buffer (tile or HBM memref).
mlir::Type bufferElementType(mlir::Type buffer);

/// Opcode, engine, flags, ALU/activation operands, immediates and DMA queue
/// of `op`; operands, waits and signal are left empty. False when `op` has
/// no ISA opcode.
bool describeInstruction(mlir::Operation *op, isa::Instruction &inst);

/// The shape of one access in ISA terms: memory kind, dtype, partition
/// start and count, free dims, the HBM partition stride, and the byte offset
/// inside the buffer (for a tile: inside each partition, not counting the
/// tile's address; for HBM: inside the region). On failure returns false
/// and sets `error`.
bool describeAccess(const Access &access, isa::AccessPattern &out,
                    std::string &error);

/// describeInstruction plus describeAccess of every operand: enough for the
/// simulator's cost formulas (sim/CostModel.h). False when either fails.
bool describeForCost(mlir::Operation *op, isa::Instruction &inst);

} // namespace trnc::nisa
