//===- TrnBase.td - trn dialect definition -----------------*- tablegen -*-===//
//
// The tensor-level dialect the graph importer targets: value semantics on
// static-shape ranked tensors, one op per computation the backend lowers.
// Views (transpose, reshape, broadcast) are ops here; the lowering to nisa
// turns them into access patterns rather than copies wherever it can.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_BASE
#define TRN_BASE

include "mlir/IR/OpBase.td"

def Trn_Dialect : Dialect {
  let name = "trn";
  let cppNamespace = "::trnc::trn";
  let summary = "Tensor-level operations of the trnc compiler";
  let description = [{
    Static-shape, value-semantics tensor operations, close to the core ATen
    operators that AOTAutograd hands to the backend. Every op here has a
    lowering to the `nisa` instruction dialect; an ATen operator without a
    trn counterpart is reported by the importer, never silently dropped.
  }];
  let useDefaultTypePrinterParser = 0;
  let useDefaultAttributePrinterParser = 0;
}

class Trn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Trn_Dialect, mnemonic, traits>;

// Element types. Floats compute in fp32 on the engines; i32 and i64 are
// integers (i64 is computed as i32 on chip, Isa.h DType); i1 is torch.bool
// (one byte, 0 or 1). Other dtypes are rejected by the importer with a
// message that names the node.
def Trn_FloatTensor : RankedTensorOf<[F32, BF16, F16]>;
def Trn_IntTensor : RankedTensorOf<[I32, I64]>;
def Trn_BoolTensor : RankedTensorOf<[I1]>;
// Arithmetic operands: floats and integers.
def Trn_NumericTensor : RankedTensorOf<[F32, BF16, F16, I32, I64]>;
// Any element type the backend handles (views, copies, casts, selects).
def Trn_Tensor : RankedTensorOf<[F32, BF16, F16, I32, I64, I1]>;

#endif // TRN_BASE
