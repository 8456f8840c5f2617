// An add of x and a scatter-add into zeros is the scatter-add into x
// (trn.add's canonicalization, TrnElementwisePatterns.cpp): a tied
// embedding's gradient added to the output projection's. Left alone: a
// scatter that overwrites, one into a nonzero base, and one read elsewhere.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @tied_embedding_gradient
// CHECK-SAME: (%[[W:.*]]: tensor<16x8xbf16>, %[[I:.*]]: tensor<6xi64>, %[[G:.*]]: tensor<6x8xbf16>)
// CHECK-NOT: trn.full
// CHECK: %[[R:.*]] = trn.scatter_rows %[[W]], %[[I]], %[[G]] accumulate
// CHECK-NOT: trn.add
// CHECK: return %[[R]]
func.func @tied_embedding_gradient(%w: tensor<16x8xbf16>, %i: tensor<6xi64>, %g: tensor<6x8xbf16>) -> tensor<16x8xbf16> {
  %z = trn.full 0.0 : tensor<16x8xbf16>
  %s = trn.scatter_rows %z, %i, %g accumulate : tensor<16x8xbf16>, tensor<6xi64>, tensor<6x8xbf16> -> tensor<16x8xbf16>
  %r = trn.add %s, %w : tensor<16x8xbf16>
  return %r : tensor<16x8xbf16>
}

// -----

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: trn.add
func.func @kept(%w: tensor<16x8xf32>, %i: tensor<6xi64>, %g: tensor<6x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %z = trn.full 0.0 : tensor<16x8xf32>
  %one = trn.full 1.0 : tensor<16x8xf32>
  %overwrite = trn.scatter_rows %z, %i, %g : tensor<16x8xf32>, tensor<6xi64>, tensor<6x8xf32> -> tensor<16x8xf32>
  %a = trn.add %w, %overwrite : tensor<16x8xf32>
  %ones = trn.scatter_rows %one, %i, %g accumulate : tensor<16x8xf32>, tensor<6xi64>, tensor<6x8xf32> -> tensor<16x8xf32>
  %b = trn.add %w, %ones : tensor<16x8xf32>
  %shared = trn.scatter_rows %z, %i, %g accumulate : tensor<16x8xf32>, tensor<6xi64>, tensor<6x8xf32> -> tensor<16x8xf32>
  %c = trn.add %w, %shared : tensor<16x8xf32>
  return %a, %b, %c, %shared : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}
