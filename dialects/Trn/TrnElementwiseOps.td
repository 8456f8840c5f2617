//===- TrnElementwiseOps.td - trn elementwise ops ---------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td), one file
// per operator area so each area grows on its own.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_ELEMENTWISE_OPS
#define TRN_ELEMENTWISE_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Trn_BinaryOp<string mnemonic, string math>
    : Trn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # math;
  let description = [{
    Elementwise `}] # math # [{` of two tensors of the same shape and element
    type. The importer makes broadcasting explicit with `trn.broadcast` and
    type promotion explicit with `trn.convert`.

    ```mlir
    %r = trn.}] # mnemonic # [{ %a, %b : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_NumericTensor:$lhs, Trn_NumericTensor:$rhs);
  let results = (outs Trn_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Trn_AddOp : Trn_BinaryOp<"add", "lhs + rhs">;
def Trn_SubOp : Trn_BinaryOp<"sub", "lhs - rhs">;
def Trn_MulOp : Trn_BinaryOp<"mul", "lhs * rhs">;

class Trn_ScalarOp<string mnemonic, string math>
    : Trn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # math # " with a compile-time scalar";
  let description = [{
    `}] # math # [{` for every element; `value` is a compile-time scalar
    (the scalar operand of the ATen op, or its `alpha`).

    ```mlir
    %r = trn.}] # mnemonic # [{ %x, 2.0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_NumericTensor:$input, F64Attr:$value);
  let results = (outs Trn_NumericTensor:$result);
  let assemblyFormat = "$input `,` $value attr-dict `:` type($result)";
}

def Trn_AddScalarOp : Trn_ScalarOp<"add_scalar", "input + value">;
def Trn_MulScalarOp : Trn_ScalarOp<"mul_scalar", "input * value">;

def Trn_ReluOp : Trn_Op<"relu", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise max(x, 0)";
  let description = [{
    ```mlir
    %r = trn.relu %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_NumericTensor:$input);
  let results = (outs Trn_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Trn_ThresholdBackwardOp
    : Trn_Op<"threshold_backward", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of threshold/relu: input > threshold ? grad : 0";
  let description = [{
    The backward of `relu` (ATen `threshold_backward`): passes `grad` where
    `input > threshold` and zero elsewhere.

    ```mlir
    %g = trn.threshold_backward %grad, %x, 0.0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$grad, Trn_FloatTensor:$input,
                       F64Attr:$threshold);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input `,` $threshold attr-dict `:` type($result)";
}

def Trn_ConvertOp : Trn_Op<"convert", [Pure, SameOperandsAndResultShape]> {
  let summary = "element type conversion, as torch casts";
  let description = [{
    Float -> float rounds to nearest even; float -> int truncates toward
    zero (saturating); anything -> i1 is `x != 0`; i64 <-> i32 is exact
    within the int32 range and saturates outside it (Isa.h, DType).

    ```mlir
    %r = trn.convert %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Trn_Tensor:$input);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Trn_FullOp : Trn_Op<"full", [Pure]> {
  let summary = "a tensor filled with one value";
  let description = [{
    ```mlir
    %z = trn.full 0.0 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

#endif // TRN_ELEMENTWISE_OPS
