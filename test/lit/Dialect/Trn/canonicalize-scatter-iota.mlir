// A scatter by an arange over every row of its base, once each, writes every
// row (trn.scatter_rows's canonicalization, TrnIndexingPatterns.cpp): it is
// its source (reversed for a descending arange), added to the base when it
// accumulates. Left alone: an arange over only some rows, one reaching past
// the base, a repeated row (step 0), a stride of 2, and an index that is not
// an iota.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s

// The position embedding's gradient: summed over the batch, scattered by
// positions 0..T-1 into zeros.
// CHECK-LABEL: func.func @positions
// CHECK-SAME: (%[[S:.*]]: tensor<16x8xbf16>)
// CHECK-NOT: trn.iota
// CHECK-NOT: trn.scatter_rows
// CHECK: %[[Z:.*]] = trn.full 0.0{{.*}} : tensor<16x8xbf16>
// CHECK: %[[A:.*]] = trn.add %[[Z]], %[[S]] : tensor<16x8xbf16>
// CHECK: return %[[A]]
func.func @positions(%s: tensor<16x8xbf16>) -> tensor<16x8xbf16> {
  %z = trn.full 0.0 : tensor<16x8xbf16>
  %i = trn.iota start = 0.0 step = 1.0 : tensor<16xi64>
  %r = trn.scatter_rows %z, %i, %s accumulate : tensor<16x8xbf16>, tensor<16xi64>, tensor<16x8xbf16> -> tensor<16x8xbf16>
  return %r : tensor<16x8xbf16>
}

// -----

// Without accumulate every row is overwritten: the base is not read.
// CHECK-LABEL: func.func @overwrite
// CHECK-SAME: (%{{.*}}: tensor<16x8xf32>, %[[S:.*]]: tensor<16x8xf32>)
// CHECK-NEXT: return %[[S]]
func.func @overwrite(%b: tensor<16x8xf32>, %s: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %i = trn.iota start = 0.0 step = 1.0 : tensor<16xi32>
  %r = trn.scatter_rows %b, %i, %s : tensor<16x8xf32>, tensor<16xi32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

// Rows 15, 14, ..., 0: row r is the source's row 15 - r.
// CHECK-LABEL: func.func @descending
// CHECK-SAME: (%[[B:.*]]: tensor<16x8xf32>, %[[S:.*]]: tensor<16x8xf32>)
// CHECK: %[[R:.*]] = trn.slice %[[S]] starts = [15, 0] steps = [-1, 1] : tensor<16x8xf32> -> tensor<16x8xf32>
// CHECK: %[[A:.*]] = trn.add %[[B]], %[[R]]
// CHECK: return %[[A]]
func.func @descending(%b: tensor<16x8xf32>, %s: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %i = trn.iota start = 15.0 step = -1.0 : tensor<16xi64>
  %r = trn.scatter_rows %b, %i, %s accumulate : tensor<16x8xf32>, tensor<16xi64>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: trn.scatter_rows
// CHECK-NOT: trn.add
func.func @kept(%b: tensor<16x8xf32>, %s8: tensor<8x8xf32>, %s16: tensor<16x8xf32>, %j: tensor<16xi64>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %some = trn.iota start = 0.0 step = 1.0 : tensor<8xi64>
  %a = trn.scatter_rows %b, %some, %s8 accumulate : tensor<16x8xf32>, tensor<8xi64>, tensor<8x8xf32> -> tensor<16x8xf32>
  %past = trn.iota start = 1.0 step = 1.0 : tensor<16xi64>
  %c = trn.scatter_rows %b, %past, %s16 accumulate : tensor<16x8xf32>, tensor<16xi64>, tensor<16x8xf32> -> tensor<16x8xf32>
  %same = trn.iota start = 3.0 step = 0.0 : tensor<16xi64>
  %d = trn.scatter_rows %b, %same, %s16 accumulate : tensor<16x8xf32>, tensor<16xi64>, tensor<16x8xf32> -> tensor<16x8xf32>
  %two = trn.iota start = 0.0 step = 2.0 : tensor<8xi64>
  %e = trn.scatter_rows %b, %two, %s8 accumulate : tensor<16x8xf32>, tensor<8xi64>, tensor<8x8xf32> -> tensor<16x8xf32>
  %f = trn.scatter_rows %b, %j, %s16 accumulate : tensor<16x8xf32>, tensor<16xi64>, tensor<16x8xf32> -> tensor<16x8xf32>
  return %a, %c, %d, %e, %f : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}
