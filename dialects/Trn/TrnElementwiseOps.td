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

// Integers and bools: the bitwise ops.
def Trn_IntOrBoolTensor : RankedTensorOf<[I32, I64, I1]>;

class Trn_BinaryOp<string mnemonic, string math,
                   TypeConstraint type = Trn_NumericTensor>
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
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Trn_AddOp : Trn_BinaryOp<"add", "lhs + rhs"> {
  // Computed in the shape of a reshaped operand (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_SubOp : Trn_BinaryOp<"sub", "lhs - rhs">;
def Trn_MulOp : Trn_BinaryOp<"mul", "lhs * rhs">;
// On integers `div` truncates toward zero (torch rounding_mode="trunc").
def Trn_DivOp : Trn_BinaryOp<"div", "lhs / rhs">;
def Trn_FloorDivOp : Trn_BinaryOp<"floor_div", "floor(lhs / rhs)">;
def Trn_MaximumOp : Trn_BinaryOp<"maximum", "max(lhs, rhs), NaN-propagating">;
def Trn_MinimumOp : Trn_BinaryOp<"minimum", "min(lhs, rhs), NaN-propagating">;
def Trn_PowOp : Trn_BinaryOp<"pow", "lhs ^ rhs">;
def Trn_RemainderOp
    : Trn_BinaryOp<"remainder", "lhs mod rhs with the sign of rhs">;
def Trn_FmodOp : Trn_BinaryOp<"fmod", "lhs mod rhs with the sign of lhs">;
def Trn_BitwiseAndOp
    : Trn_BinaryOp<"bitwise_and", "lhs & rhs", Trn_IntOrBoolTensor>;
def Trn_BitwiseOrOp
    : Trn_BinaryOp<"bitwise_or", "lhs | rhs", Trn_IntOrBoolTensor>;
def Trn_BitwiseXorOp
    : Trn_BinaryOp<"bitwise_xor", "lhs ^ rhs", Trn_IntOrBoolTensor>;

class Trn_CompareOp<string mnemonic, string math>
    : Trn_Op<mnemonic, [Pure, SameTypeOperands, SameOperandsAndResultShape]> {
  let summary = "elementwise " # math # ", a bool tensor";
  let description = [{
    `}] # math # [{` for two tensors of one shape and element type (the
    importer promotes and broadcasts them); the result is `i1`.

    ```mlir
    %r = trn.}] # mnemonic # [{ %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Trn_Tensor:$lhs, Trn_Tensor:$rhs);
  let results = (outs Trn_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
}

def Trn_EqOp : Trn_CompareOp<"eq", "lhs == rhs">;
def Trn_NeOp : Trn_CompareOp<"ne", "lhs != rhs">;
def Trn_LtOp : Trn_CompareOp<"lt", "lhs < rhs">;
def Trn_LeOp : Trn_CompareOp<"le", "lhs <= rhs">;
def Trn_GtOp : Trn_CompareOp<"gt", "lhs > rhs">;
def Trn_GeOp : Trn_CompareOp<"ge", "lhs >= rhs">;
def Trn_LogicalAndOp : Trn_CompareOp<"logical_and", "lhs != 0 && rhs != 0">;
def Trn_LogicalOrOp : Trn_CompareOp<"logical_or", "lhs != 0 || rhs != 0">;
def Trn_LogicalXorOp : Trn_CompareOp<"logical_xor", "(lhs != 0) != (rhs != 0)">;

class Trn_UnaryOp<string mnemonic, string math,
                  TypeConstraint type = Trn_FloatTensor>
    : Trn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # math;
  let description = [{
    `}] # math # [{` for every element.

    ```mlir
    %r = trn.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Trn_ExpOp : Trn_UnaryOp<"exp", "e^x">;
def Trn_Expm1Op : Trn_UnaryOp<"expm1", "e^x - 1">;
def Trn_LogOp : Trn_UnaryOp<"log", "ln(x)">;
def Trn_Log1pOp : Trn_UnaryOp<"log1p", "ln(1 + x)">;
def Trn_SqrtOp : Trn_UnaryOp<"sqrt", "sqrt(x)">;
def Trn_RsqrtOp : Trn_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Trn_ReciprocalOp : Trn_UnaryOp<"reciprocal", "1 / x">;
def Trn_SinOp : Trn_UnaryOp<"sin", "sin(x)">;
def Trn_CosOp : Trn_UnaryOp<"cos", "cos(x)">;
def Trn_TanhOp : Trn_UnaryOp<"tanh", "tanh(x)"> {
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_SigmoidOp : Trn_UnaryOp<"sigmoid", "1 / (1 + e^-x)"> {
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_GeluOp : Trn_UnaryOp<"gelu", "x * Phi(x) (erf form)"> {
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_GeluTanhOp : Trn_UnaryOp<"gelu_tanh", "gelu, tanh approximation"> {
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_SiluOp : Trn_UnaryOp<"silu", "x * sigmoid(x)"> {
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_MishOp : Trn_UnaryOp<"mish", "x * tanh(softplus(x))"> {
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
}
def Trn_ErfOp : Trn_UnaryOp<"erf", "erf(x)">;
// Derivatives for the backward of an activation: grad * f'(x).
def Trn_GeluDxOp : Trn_UnaryOp<"gelu_dx", "gelu'(x) = Phi(x) + x phi(x) (erf form)">;
def Trn_SiluDxOp : Trn_UnaryOp<"silu_dx", "silu'(x) = s (1 + x (1 - s)), s = sigmoid(x)">;
def Trn_FloorOp : Trn_UnaryOp<"floor", "floor(x)">;
def Trn_CeilOp : Trn_UnaryOp<"ceil", "ceil(x)">;
def Trn_RoundOp : Trn_UnaryOp<"round", "round half to even">;
def Trn_TruncOp : Trn_UnaryOp<"trunc", "round toward zero">;
def Trn_AbsOp : Trn_UnaryOp<"abs", "|x|", Trn_NumericTensor>;
def Trn_SignOp : Trn_UnaryOp<"sign", "sign(x) (0 for 0, NaN for NaN)",
                             Trn_NumericTensor>;
def Trn_BitwiseNotOp : Trn_UnaryOp<"bitwise_not", "~x (not for bool)",
                                   Trn_IntOrBoolTensor>;

class Trn_PredicateOp<string mnemonic, string math,
                      TypeConstraint type = Trn_FloatTensor>
    : Trn_Op<mnemonic, [Pure, SameOperandsAndResultShape]> {
  let summary = "elementwise " # math # ", a bool tensor";
  let description = [{
    ```mlir
    %r = trn.}] # mnemonic # [{ %x : tensor<4x8xf32> -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins type:$input);
  let results = (outs Trn_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Trn_IsNanOp : Trn_PredicateOp<"isnan", "x is NaN">;
def Trn_IsInfOp : Trn_PredicateOp<"isinf", "x is +-inf">;
def Trn_LogicalNotOp : Trn_PredicateOp<"logical_not", "x == 0", Trn_Tensor>;

def Trn_SelectOp : Trn_Op<"select", [Pure, SameOperandsAndResultShape,
    AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise cond ? on_true : on_false (torch.where)";
  let description = [{
    Lowered to a copy of `on_false` and a predicated copy of `on_true`
    (nisa.copy_predicated), so NaN/inf in the unselected operand never
    reach the result.

    ```mlir
    %r = trn.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_BoolTensor:$cond, Trn_Tensor:$on_true,
                       Trn_Tensor:$on_false);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = "$cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($result)";
}

def Trn_ClampOp : Trn_Op<"clamp", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise min(max(x, min), max) with scalar bounds";
  let description = [{
    Either bound may be absent; NaN propagates (torch.clamp). One
    tensor_scalar instruction.

    ```mlir
    %r = trn.clamp %x {min = -1.0 : f64, max = 1.0 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_NumericTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Trn_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Trn_LeakyReluOp : Trn_Op<"leaky_relu", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise x > 0 ? x : slope * x";
  let description = [{
    ```mlir
    %r = trn.leaky_relu %x, 0.01 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, F64Attr:$slope);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `,` $slope attr-dict `:` type($result)";
}

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
  // Computed in a reshaped producer's shape (TrnElementwisePatterns.cpp).
  let hasCanonicalizer = 1;
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
