// RUN: trnc-opt %s | trnc-opt | FileCheck %s
// Round trip of every trn op.

// CHECK-LABEL: func.func @mlp_layer
func.func @mlp_layer(%x: tensor<8x16xbf16>, %w: tensor<4x16xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  // CHECK: trn.transpose %{{.*}} permutation = [1, 0] : tensor<4x16xbf16> -> tensor<16x4xbf16>
  %wt = trn.transpose %w permutation = [1, 0] : tensor<4x16xbf16> -> tensor<16x4xbf16>
  // CHECK: trn.matmul %{{.*}}, %{{.*}} : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
  %y = trn.matmul %x, %wt : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
  // CHECK: trn.broadcast %{{.*}} : tensor<4xbf16> -> tensor<8x4xbf16>
  %bb = trn.broadcast %b : tensor<4xbf16> -> tensor<8x4xbf16>
  // CHECK: trn.add
  %z = trn.add %y, %bb : tensor<8x4xbf16>
  // CHECK: trn.sub
  %d = trn.sub %z, %y : tensor<8x4xbf16>
  // CHECK: trn.mul
  %m = trn.mul %d, %z : tensor<8x4xbf16>
  // CHECK: trn.relu
  %r = trn.relu %m : tensor<8x4xbf16>
  // CHECK: trn.threshold_backward %{{.*}}, %{{.*}}, 0.000000e+00 : tensor<8x4xbf16>
  %g = trn.threshold_backward %r, %m, 0.0 : tensor<8x4xbf16>
  // CHECK: trn.add_scalar %{{.*}}, 1.500000e+00 : tensor<8x4xbf16>
  %a = trn.add_scalar %g, 1.5 : tensor<8x4xbf16>
  // CHECK: trn.mul_scalar %{{.*}}, -2.000000e+00 : tensor<8x4xbf16>
  %s = trn.mul_scalar %a, -2.0 : tensor<8x4xbf16>
  // CHECK: trn.reduce_sum %{{.*}} dims = [0] : tensor<8x4xbf16> -> tensor<4xbf16>
  %sum = trn.reduce_sum %s dims = [0] : tensor<8x4xbf16> -> tensor<4xbf16>
  // CHECK: trn.reshape %{{.*}} : tensor<4xbf16> -> tensor<2x2xbf16>
  %rs = trn.reshape %sum : tensor<4xbf16> -> tensor<2x2xbf16>
  // CHECK: trn.convert %{{.*}} : tensor<2x2xbf16> -> tensor<2x2xf32>
  %f = trn.convert %rs : tensor<2x2xbf16> -> tensor<2x2xf32>
  // CHECK: trn.full 0.000000e+00 : tensor<2x2xf32>
  %zero = trn.full 0.0 : tensor<2x2xf32>
  %o = trn.add %f, %zero : tensor<2x2xf32>
  return %sum : tensor<4xbf16>
}

// CHECK-LABEL: func.func @folds
// The identity views and conversions fold away under canonicalization.
// RUN: trnc-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD
// FOLD-LABEL: func.func @folds
// FOLD-NOT: trn.transpose
// FOLD-NOT: trn.reshape
// FOLD-NOT: trn.convert
// FOLD: return %arg0
func.func @folds(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %t = trn.transpose %x permutation = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %r = trn.reshape %t : tensor<4x8xf32> -> tensor<4x8xf32>
  %c = trn.convert %r : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = trn.broadcast %c : tensor<4x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
