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
  let arguments = (ins Trn_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Trn_Tensor:$result);
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
  let arguments = (ins Trn_Tensor:$input);
  let results = (outs Trn_Tensor:$result);
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
  let arguments = (ins Trn_Tensor:$input);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement: strided windows and concatenation
//===----------------------------------------------------------------------===//

def Trn_SliceOp : Trn_Op<"slice", [Pure]> {
  let summary = "a strided window of a tensor (slice, select, narrow, flip)";
  let description = [{
    `result[i0, i1, ...] = input[starts[0] + i0 * steps[0], ...]`: every dim
    starts at `starts[d]` and steps by `steps[d]`, which may be negative
    (flip walks a dim backwards). The result shape gives the counts. The
    lowering folds it into the HBM access pattern (offset and strides): no
    instruction.

    ```mlir
    %s = trn.slice %x starts = [1, 5] steps = [2, -1] : tensor<4x6xf32> -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins Trn_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$input `starts` `=` $starts `steps` `=` $steps attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Trn_ConcatOp : Trn_Op<"concat", [Pure]> {
  let summary = "concatenate tensors along one dimension (cat)";
  let description = [{
    Every input has the result's shape except along `dim`, where the result
    size is the sum of the inputs'. Lowered to one DMA copy per input into
    its slice of the result.

    ```mlir
    %c = trn.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Trn_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$inputs `dim` `=` $dim attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Index patterns: arange and triangular masks (GpSimd iota / affine_select)
//===----------------------------------------------------------------------===//

def Trn_IotaOp : Trn_Op<"iota", [Pure]> {
  let summary = "arange: result[i] = start + step * i";
  let description = [{
    A 1-D tensor; lowered to one GpSimd `iota` per tile. An integer result
    is written by the iota into an int32 tile (exact while |value| <= 2^24;
    int64 is widened by the store DMA); its start and step are integers.

    ```mlir
    %r = trn.iota start = 3.0 step = 2.0 : tensor<4xf32>
    ```
  }];
  let arguments = (ins F64Attr:$start, F64Attr:$step);
  let results = (outs Trn_NumericTensor:$result);
  let assemblyFormat = "`start` `=` $start `step` `=` $step attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Trn_TriangleOp : Trn_Op<"triangle", [Pure]> {
  let summary = "tril / triu: zero the elements off one side of a diagonal";
  let description = [{
    Over the last two dims (i, j): `tril` keeps `j - i <= diagonal`, `triu`
    (`upper`) keeps `j - i >= diagonal`; other elements become 0. Lowered to
    one GpSimd `affine_select` per tile. Integer and bool tensors are
    selected in their own tiles (int64 through int32, as every engine op).

    ```mlir
    %t = trn.triangle %x diagonal = 0 upper = false : tensor<4x4xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Trn_Tensor:$input, I64Attr:$diagonal, BoolAttr:$upper);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$input `diagonal` `=` $diagonal `upper` `=` $upper attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TRN_LAYOUT_OPS
