//===- TrnLayoutOps.td - trn layout and data movement ops -*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td), one file
// per operator area so each area grows on its own.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_LAYOUT_OPS
#define TRN_LAYOUT_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Layout: views that the lowering folds into access patterns
//===----------------------------------------------------------------------===//

def Trn_TransposeOp : Trn_Op<"transpose", [Pure]> {
  let summary = "permute dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %t = trn.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `permutation` `=` $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Trn_ReshapeOp : Trn_Op<"reshape", [Pure]> {
  let summary = "reinterpret the row-major elements with another shape";
  let description = [{
    ```mlir
    %r = trn.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Trn_BroadcastOp : Trn_Op<"broadcast", [Pure]> {
  let summary = "numpy-style broadcast to a larger shape";
  let description = [{
    Trailing dimensions align; each input dimension equals the result's or
    is 1. Like ATen `expand`.

    ```mlir
    %b = trn.broadcast %x : tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // TRN_LAYOUT_OPS
