//===- SpillTiles.h - SBUF tiles through HBM when they do not fit -*- C++ -*-===//
//
// Spilling for trnc-allocate-memory: when a tile finds no room in SBUF at
// instruction `at`, a tile that is live across `at` but not touched by it
// (the one whose next access is farthest: Belady's choice) is stored to an
// HBM scratch buffer after its last access before `at` and loaded back
// into a fresh tile just before its next access; the instructions from
// there on read the fresh tile. Its bytes are free in between.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace trnc {

/// Spills one SBUF tile live across instruction `at` (index in program
/// order over nisa instructions). False, with nothing changed, when every
/// SBUF tile live there is accessed by that instruction.
bool spillAcross(mlir::func::FuncOp func, int64_t at);

} // namespace trnc
