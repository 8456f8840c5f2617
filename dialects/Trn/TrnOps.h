//===- TrnOps.h - trn dialect operations --------------------------*- C++ -*-===//
#pragma once

#include "dialects/Trn/TrnDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Trn/TrnOps.h.inc"
