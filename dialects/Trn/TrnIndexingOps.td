//===- TrnIndexingOps.td - trn gather/scatter of rows ------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td): the two
// indexed row movements every indexing operator decomposes to (the
// trnc.gather_rows / trnc.scatter_rows custom ops, docs/graph-json.md).
// Both lower to the DmaIndirect instruction (passes/Tile/LowerIndirect.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TRN_INDEXING_OPS
#define TRN_INDEXING_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Trn_GatherRowsOp : Trn_Op<"gather_rows", [Pure]> {
  let summary = "result[m] = table[index[m]] (zero row if out of range)";
  let description = [{
    `table` is [N, D], `index` [M] (i32 or i64), the result [M, D] with the
    table's element type. An index outside [0, N) gives a row of zeros. An
    in-range arange index (trn.iota) canonicalizes to a trn.slice.

    ```mlir
    %r = trn.gather_rows %table, %index : tensor<1000x64xf32>, tensor<8xi64> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Trn_Tensor:$table, Trn_IntTensor:$index);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = [{
    $table `,` $index attr-dict `:` type($table) `,` type($index) `->` type($result)
  }];
  let hasVerifier = 1;
  // An arange index is a strided window (TrnIndexingPatterns.cpp).
  let hasCanonicalizer = 1;
}

def Trn_ScatterRowsOp : Trn_Op<"scatter_rows", [Pure]> {
  let summary = "a copy of base with rows of src written (or added) at index";
  let description = [{
    Functional: result = base ([N, D]); then for m = 0..M-1 in order, if
    0 <= index[m] < N, result[index[m]] = src[m] (last writer wins) or, with
    `accumulate`, result[index[m]] += src[m] (summed in fp32, then cast).
    Out-of-range rows are dropped (index -1 skips a row).

    ```mlir
    %r = trn.scatter_rows %base, %index, %src accumulate
        : tensor<1000x64xf32>, tensor<8xi64>, tensor<8x64xf32> -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Trn_Tensor:$base, Trn_IntTensor:$index,
                       Trn_Tensor:$src, UnitAttr:$accumulate);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = [{
    $base `,` $index `,` $src (`accumulate` $accumulate^)? attr-dict
    `:` type($base) `,` type($index) `,` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
  // An arange over every row writes every row (TrnIndexingPatterns.cpp).
  let hasCanonicalizer = 1;
}

#endif // TRN_INDEXING_OPS
