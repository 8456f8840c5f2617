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

// Element types the first slice computes in. Wider types are rejected by the
// importer with a message that names the node.
def Trn_FloatTensor : RankedTensorOf<[F32, BF16, F16]>;

#endif // TRN_BASE
