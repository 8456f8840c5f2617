//===- Emit.h - scheduled nisa -> Program (per-engine streams) -----*- C++ -*-===//
//
// The emitter turns the output of the compile pipeline (a func.func of nisa
// instructions with addresses, waits and signals) into the in-memory
// artifact the runtime loads: HBM regions, one instruction stream per engine
// and a table of source locations. Deterministic: the same function gives
// the same Program, field by field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace trnc {

/// Name of the optional StringAttr on a nisa instruction carrying the ATen
/// target it came from (e.g. "aten.mm.default"); when absent the source
/// table names the nisa op.
constexpr llvm::StringLiteral kSourceOpAttrName = "trnc.op";

/// Builds the Program of `func` for `target`. Fails, naming the op, on a
/// tile without an address or an op/type the ISA cannot express. `peer`,
/// when given, is physical core 1's function of an LNC=2 program
/// (SplitLogicalCores.cpp): its instructions become Program::peerStreams.
llvm::Expected<Program> emitProgram(mlir::func::FuncOp func,
                                    llvm::StringRef target,
                                    mlir::func::FuncOp peer = {});

/// One line per instruction: engine, index, opcode, operands, waits and
/// signal, then the source location. For `trnc-compile --disassemble` and
/// `trnc inspect`.
std::string disassemble(const Program &program);

} // namespace trnc
