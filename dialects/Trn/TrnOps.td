//===- TrnOps.td - trn dialect operations ------------------*- tablegen -*-===//
//
// Operations of the trn dialect, one file per operator area.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_OPS
#define TRN_OPS

include "dialects/Trn/TrnElementwiseOps.td"
include "dialects/Trn/TrnMatmulOps.td"
include "dialects/Trn/TrnReductionOps.td"
include "dialects/Trn/TrnLayoutOps.td"
include "dialects/Trn/TrnRandomOps.td"
include "dialects/Trn/TrnIndexingOps.td"
include "dialects/Trn/TrnKernelOps.td"
include "dialects/Trn/TrnCollectiveOps.td"
include "dialects/Trn/TrnFusionOps.td"

#endif // TRN_OPS
