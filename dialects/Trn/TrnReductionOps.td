//===- TrnReductionOps.td - trn reduction ops -------------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td), one file
// per operator area so each area grows on its own. Verifiers live in
// TrnReductionOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_REDUCTION_OPS
#define TRN_REDUCTION_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Reductions: one op per combining function, one lowering for all of them
//===----------------------------------------------------------------------===//

class Trn_ReduceOp<string mnemonic, string what> : Trn_Op<mnemonic, [Pure]> {
  let summary = what # " over dimensions, which are removed from the shape";
  let description = [{
    Reduces over `dims` (sorted, unique) and drops them; `keepdim` is a
    `trn.reshape` after this op. Accumulates in fp32 on the Vector engine.

    ```mlir
    %s = trn.}] # mnemonic # [{ %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Trn_ReduceSumOp : Trn_ReduceOp<"reduce_sum", "sum"> {
  // A one-hot select's sum (TrnReductionPatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_ReduceMaxOp : Trn_ReduceOp<"reduce_max", "maximum">;
def Trn_ReduceMinOp : Trn_ReduceOp<"reduce_min", "minimum">;
def Trn_ReduceProdOp : Trn_ReduceOp<"reduce_prod", "product">;

//===----------------------------------------------------------------------===//
// Softmax: fused, one pass over each row held in SBUF
//===----------------------------------------------------------------------===//

def Trn_SoftmaxOp : Trn_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "numerically stable (log-)softmax along one dimension";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `dim`, or with `log` set
    `x - max - log(sum(exp(x - max)))`. Lowered fused: each row is loaded
    once, its max and sum of exponentials stay in per-partition registers
    (the Scalar engine's per-partition bias subtracts the max inside the
    exponential). Rows longer than one SBUF tile are refused by the lowering.

    ```mlir
    %s = trn.softmax %x dim = 1 : tensor<4x8xf32>
    %l = trn.softmax %x dim = 1 log : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, I64Attr:$dim, UnitAttr:$log);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim (`log` $log^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Scans: inclusive, along one dimension
//===----------------------------------------------------------------------===//

class Trn_ScanOp<string mnemonic, string what>
    : Trn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "inclusive " # what # " along one dimension";
  let description = [{
    Lowered to the Vector engine's `tensor_scan` along the free axis, rows
    on partitions; chunks of a long row carry the previous chunk's last
    value with one `tensor_tensor`.

    ```mlir
    %c = trn.}] # mnemonic # [{ %x dim = 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Trn_CumsumOp : Trn_ScanOp<"cumsum", "sum">;
def Trn_CumprodOp : Trn_ScanOp<"cumprod", "product">;

#endif // TRN_REDUCTION_OPS
