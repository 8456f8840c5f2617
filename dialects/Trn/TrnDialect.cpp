//===- TrnDialect.cpp - trn dialect registration --------------------------===//
#include "dialects/Trn/TrnOps.h"

using namespace mlir;
using namespace trnc::trn;

#include "dialects/Trn/TrnOpsDialect.cpp.inc"

void TrnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Trn/TrnOps.cpp.inc"
      >();
}
