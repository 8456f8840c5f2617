//===- NisaDialect.h - nisa dialect, attributes, types ------------*- C++ -*-===//
//
// The instruction-level dialect. Enums mirror trnc::isa numerically so the
// emitter converts with a static_cast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Nisa/NisaEnums.h.inc"
#include "dialects/Nisa/NisaDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Nisa/NisaAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Nisa/NisaTypes.h.inc"
