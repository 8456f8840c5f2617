// A gather by an arange is a strided window of the table (trn.gather_rows's
// canonicalization, TrnIndexingPatterns.cpp): positions 0..T-1 gathering
// their embedding rows read the table's first T rows. Left alone: an index
// reaching past the table (its rows would be zeros), a negative one, a
// repeated row (step 0), an index converted from a fractional f32 iota, and
// one that is not an iota at all.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @positions
// CHECK-SAME: (%[[T:.*]]: tensor<16x8xbf16>)
// CHECK-NOT: trn.iota
// CHECK-NOT: trn.gather_rows
// CHECK: %[[S:.*]] = trn.slice %[[T]] starts = [0, 0] steps = [1, 1] : tensor<16x8xbf16> -> tensor<12x8xbf16>
// CHECK: return %[[S]]
func.func @positions(%t: tensor<16x8xbf16>) -> tensor<12x8xbf16> {
  %i = trn.iota start = 0.0 step = 1.0 : tensor<12xi64>
  %r = trn.gather_rows %t, %i : tensor<16x8xbf16>, tensor<12xi64> -> tensor<12x8xbf16>
  return %r : tensor<12x8xbf16>
}

// -----

// A strided, backwards arange: rows 15, 12, ..., 0.
// CHECK-LABEL: func.func @strided
// CHECK: trn.slice %{{.*}} starts = [15, 0] steps = [-3, 1] : tensor<16x8xf32> -> tensor<6x8xf32>
// CHECK-NOT: trn.gather_rows
func.func @strided(%t: tensor<16x8xf32>) -> tensor<6x8xf32> {
  %i = trn.iota start = 15.0 step = -3.0 : tensor<6xi32>
  %r = trn.gather_rows %t, %i : tensor<16x8xf32>, tensor<6xi32> -> tensor<6x8xf32>
  return %r : tensor<6x8xf32>
}

// -----

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: trn.gather_rows
// CHECK-NOT: trn.slice
func.func @kept(%t: tensor<16x8xf32>, %j: tensor<4xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %past = trn.iota start = 13.0 step = 1.0 : tensor<4xi64>
  %a = trn.gather_rows %t, %past : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %neg = trn.iota start = -1.0 step = 1.0 : tensor<4xi64>
  %b = trn.gather_rows %t, %neg : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %same = trn.iota start = 2.0 step = 0.0 : tensor<4xi64>
  %c = trn.gather_rows %t, %same : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %half = trn.iota start = 0.0 step = 0.5 : tensor<4xf32>
  %hi = trn.convert %half : tensor<4xf32> -> tensor<4xi64>
  %d = trn.gather_rows %t, %hi : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  %e = trn.gather_rows %t, %j : tensor<16x8xf32>, tensor<4xi64> -> tensor<4x8xf32>
  return %a, %b, %c, %d, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
