//===- TrnMatmulOps.td - trn matmul ops -------------------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td), one file
// per operator area so each area grows on its own.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_MATMUL_OPS
#define TRN_MATMUL_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def Trn_MatmulOp : Trn_Op<"matmul", [Pure]> {
  let summary = "matrix product [B..., M, K] x [B..., K, N] -> [B..., M, N]";
  let description = [{
    Rank 2 (`mm`) or rank 3 with one batch dim of equal size on both sides
    (`bmm`; `matmul`/`einsum` with batch dims reach it as views + `bmm`).
    Accumulates in fp32 whatever the operand type, like the Tensor Engine.
    Operands and result share one element type.

    ```mlir
    %c = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %d = trn.matmul %x, %y : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$lhs, Trn_FloatTensor:$rhs);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

def Trn_Conv2dOp : Trn_Op<"conv2d", [Pure]> {
  let summary = "2-D convolution (cross-correlation) [N, C, H, W] * [O, C/g, KH, KW]";
  let description = [{
    result[n, o, y, x] = sum over c, i, j of
      in'[n, g(o) * C/g + c, y * stride[0] + i * dilation[0],
                             x * stride[1] + j * dilation[1]] *
      weight[o, c, flip ? KH-1-i : i, flip ? KW-1-j : j]
    where in' is the input with `lhs_dilation - 1` zeros inserted between
    elements and then `padding` zeros before them (negative padding crops);
    positions past its end read zero, so the result type alone sets the
    output size (this covers ATen's high-side padding, output_padding and
    the leftover rows of strided convolutions). The extra attributes let
    one op express the forward convolution, its input gradient (lhs
    dilation = stride, flipped weight) and its weight gradient (batch and
    channel roles exchanged, stride and dilation exchanged).

    ```mlir
    %y = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
           dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
           groups = 1 : i64, flip = false}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, Trn_FloatTensor:$weight,
                   DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                   DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$lhs_dilation,
                   I64Attr:$groups, BoolAttr:$flip);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention (one fused group: the L x S scores never reach HBM)
//===----------------------------------------------------------------------===//

def Trn_AttentionOp : Trn_Op<"attention", [Pure]> {
  let summary = "softmax(q k^T * scale [+ causal mask]) v, and its logsumexp";
  let description = [{
    `q` is [N, H, L, E], `k` [N, H, S, E], `v` [N, H, S, Ev]. With `causal`,
    query i attends keys j <= i (top-left aligned, as `is_causal`). The
    output is [N, L, H, Ev] (the layout of PyTorch's fused CPU kernel: the
    caller permutes it to [N, H, L, Ev] as a view); `lse` is the fp32 row
    logsumexp of the scaled, masked scores, [N, H, L], what
    `trn.attention_grad` needs to recompute the probabilities.
    Scores and softmax are fp32; the probabilities meet `v` in v's type.
    Lowered as one group (passes/Tile/LowerAttention.cpp).

    ```mlir
    %o, %lse = trn.attention %q, %k, %v {scale = 0.125 : f64, causal}
        : (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>)
        -> (tensor<1x256x2x64xbf16>, tensor<1x2x256xf32>)
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$q, Trn_FloatTensor:$k,
                   Trn_FloatTensor:$v, F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Trn_FloatTensor:$out, Trn_FloatTensor:$lse);
  let assemblyFormat = "$q `,` $k `,` $v attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Trn_AttentionGradOp : Trn_Op<"attention_grad", [Pure]> {
  let summary = "gradients of trn.attention with respect to q, k and v";
  let description = [{
    `dout` and `out` are [N, H, L, Ev] (any layout), `lse` the forward's
    [N, H, L] logsumexp. With P = exp(q k^T * scale - lse) (masked as the
    forward) and D = rowsum(dout * out): dv = P^T dout, dS = P * (dout v^T -
    D), dq = dS k * scale, dk = dS^T q * scale. Results have the element
    type of q and the forward output's layout, sequence before heads: dq
    [N, L, H, E], dk [N, S, H, E], dv [N, S, H, Ev] (the caller permutes
    them to q, k, v's shapes as views; the gradient of the usual
    `x.view(B, T, H, E).transpose(1, 2)` is then a view too, no copy).

    ```mlir
    %dq, %dk, %dv = trn.attention_grad %do, %q, %k, %v, %o, %lse {scale = 0.125 : f64}
        : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>,
           tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256xf32>)
        -> (tensor<1x256x2x64xf32>, tensor<1x256x2x64xf32>, tensor<1x256x2x64xf32>)
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$dout, Trn_FloatTensor:$q,
                   Trn_FloatTensor:$k, Trn_FloatTensor:$v,
                   Trn_FloatTensor:$out, Trn_FloatTensor:$lse,
                   F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Trn_FloatTensor:$dq, Trn_FloatTensor:$dk,
                 Trn_FloatTensor:$dv);
  let assemblyFormat = "$dout `,` $q `,` $k `,` $v `,` $out `,` $lse attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // TRN_MATMUL_OPS
