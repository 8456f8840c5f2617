// An add of an argument and a reshaped computed value is computed in the
// computed value's shape (trn.add's canonicalization,
// TrnElementwisePatterns.cpp), so it can join that value's fusion group; a
// reshape of an argument on both sides, or of an argument alone, is left.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s

// The logits' tangent plus the logits gradient viewed [B, T, V].
// CHECK-LABEL: func.func @tangent_plus_gradient
// CHECK-SAME: (%[[T:.*]]: tensor<2x4x8xf32>, %[[X:.*]]: tensor<8x8xf32>)
// CHECK: %[[G:.*]] = trn.exp %[[X]] : tensor<8x8xf32>
// CHECK: %[[T2:.*]] = trn.reshape %[[T]] : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK: %[[S:.*]] = trn.add %[[T2]], %[[G]] : tensor<8x8xf32>
// CHECK: %[[R:.*]] = trn.reshape %[[S]] : tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK: return %[[R]]
func.func @tangent_plus_gradient(%t: tensor<2x4x8xf32>, %x: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  %g = trn.exp %x : tensor<8x8xf32>
  %v = trn.reshape %g : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %s = trn.add %t, %v : tensor<2x4x8xf32>
  return %s : tensor<2x4x8xf32>
}

// -----

// Operands the other way round; the other operand a reshape of a value of
// the computed value's shape is read without a new reshape.
// CHECK-LABEL: func.func @both_reshaped
// CHECK: %[[G:.*]] = trn.exp
// CHECK: %[[H:.*]] = trn.tanh
// CHECK: %[[S:.*]] = trn.add %[[G]], %[[H]] : tensor<8x8xf32>
// CHECK: trn.reshape %[[S]] : tensor<8x8xf32> -> tensor<64xf32>
func.func @both_reshaped(%x: tensor<8x8xf32>) -> tensor<64xf32> {
  %g = trn.exp %x : tensor<8x8xf32>
  %h = trn.tanh %x : tensor<8x8xf32>
  %a = trn.reshape %g : tensor<8x8xf32> -> tensor<64xf32>
  %b = trn.reshape %h : tensor<8x8xf32> -> tensor<64xf32>
  %s = trn.add %a, %b : tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// Left alone: a reshaped argument (nothing to fuse with), and a computed
// other operand of the add's own shape (it would need a reshape of its own).
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[A:.*]] = trn.reshape %arg0
// CHECK: trn.add %arg1, %[[A]] : tensor<64xf32>
// CHECK: %[[B:.*]] = trn.reshape
// CHECK: trn.add %{{.*}}, %[[B]] : tensor<64xf32>
func.func @left_alone(%x: tensor<8x8xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %a = trn.reshape %x : tensor<8x8xf32> -> tensor<64xf32>
  %s = trn.add %y, %a : tensor<64xf32>
  %e = trn.exp %y : tensor<64xf32>
  %g = trn.exp %x : tensor<8x8xf32>
  %b = trn.reshape %g : tensor<8x8xf32> -> tensor<64xf32>
  %t = trn.add %e, %b : tensor<64xf32>
  return %s, %t : tensor<64xf32>, tensor<64xf32>
}
