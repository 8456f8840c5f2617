//===- TrnDialect.h - trn dialect ---------------------------------*- C++ -*-===//
//
// The tensor-level dialect the graph importer produces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Dialect.h"

#include "dialects/Trn/TrnOpsDialect.h.inc"
