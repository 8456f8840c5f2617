// An activation of a reshaped computed value is computed in the computed
// value's shape and its result reshaped (TrnElementwisePatterns.cpp), so it
// joins the producer's fusion group (a GELU after an MLP's up-projection
// viewed [B, T, 4C] becomes part of the matmul's epilogue); an activation
// of a reshaped argument, or of a reshape that changes the rows, is left. A
// reshape of a reshape is one reshape.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s
// RUN: trnc-opt %s -split-input-file --canonicalize --trnc-form-fusion-groups | FileCheck %s --check-prefix=GROUP

// The up-projection's GELU: computed on the [8, 16] product, the
// down-projection reads it without a reshape.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[P:.*]] = trn.matmul
// CHECK: %[[G:.*]] = trn.gelu %[[P]] : tensor<8x16xf32>
// CHECK: %[[V:.*]] = trn.reshape %[[G]] : tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK: trn.matmul %[[G]], %{{.*}} : (tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK: return %{{.*}}, %[[V]]
// GROUP-LABEL: func.func @mlp
// GROUP: trn.fusion_group "matmul"
// GROUP-NEXT: trn.matmul
// GROUP-NEXT: trn.gelu
func.func @mlp(%x: tensor<8x4xf32>, %w1: tensor<4x16xf32>, %w2: tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<2x4x16xf32>) {
  %p = trn.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %v = trn.reshape %p : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %g = trn.gelu %v : tensor<2x4x16xf32>
  %u = trn.reshape %g : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %o = trn.matmul %u, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %o, %g : tensor<8x4xf32>, tensor<2x4x16xf32>
}

// -----

// Every activation of the set does the same (SiLU here); a reshape of a
// reshape folds into one.
// CHECK-LABEL: func.func @silu_chain
// CHECK: %[[E:.*]] = trn.exp
// CHECK: %[[S:.*]] = trn.silu %[[E]] : tensor<8x16xf32>
// CHECK: trn.reshape %[[S]] : tensor<8x16xf32> -> tensor<128xf32>
// CHECK-NOT: trn.reshape
func.func @silu_chain(%x: tensor<8x16xf32>) -> tensor<128xf32> {
  %e = trn.exp %x : tensor<8x16xf32>
  %v = trn.reshape %e : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %s = trn.silu %v : tensor<2x4x16xf32>
  %f = trn.reshape %s : tensor<2x4x16xf32> -> tensor<128xf32>
  return %f : tensor<128xf32>
}

// -----

// A reshaped argument: nothing to fuse with, left as it is.
// CHECK-LABEL: func.func @argument
// CHECK: %[[V:.*]] = trn.reshape %arg0 : tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK: trn.gelu %[[V]] : tensor<2x4x16xf32>
func.func @argument(%x: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %v = trn.reshape %x : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %g = trn.gelu %v : tensor<2x4x16xf32>
  return %g : tensor<2x4x16xf32>
}

// -----

// A reshape that changes the rows ([8, 16] as [128]): left, so the
// activation keeps the shape its reader has.
// CHECK-LABEL: func.func @rows_change
// CHECK: %[[V:.*]] = trn.reshape %{{.*}} : tensor<8x16xf32> -> tensor<128xf32>
// CHECK: trn.tanh %[[V]] : tensor<128xf32>
func.func @rows_change(%x: tensor<8x16xf32>) -> tensor<128xf32> {
  %e = trn.exp %x : tensor<8x16xf32>
  %v = trn.reshape %e : tensor<8x16xf32> -> tensor<128xf32>
  %t = trn.tanh %v : tensor<128xf32>
  return %t : tensor<128xf32>
}
