// The sum of a one-hot select (trn.reduce_sum's canonicalization,
// TrnReductionPatterns.cpp): sum over d of select(iota_d == t, a, 0), t and
// a the same along d, is a where t is an index of d, else 0, computed per
// row without a pass over it. The select itself stays for its other readers.
// RUN: trnc-opt %s -split-input-file --canonicalize | FileCheck %s

// The cross-entropy gradient's row sum (bf16 g, widened before the sum):
// the per-row target must be an integer in [0, 7].
// CHECK-LABEL: func.func @cross_entropy_rows
// CHECK-SAME: (%[[T:.*]]: tensor<4x1xf32>, %[[G:.*]]: tensor<bf16>)
// CHECK-NOT: trn.reduce_sum
// CHECK-DAG: %[[T4:.*]] = trn.reshape %[[T]] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-DAG: %[[G1:.*]] = trn.broadcast %[[G]] : tensor<bf16> -> tensor<4x1xbf16>
// CHECK-DAG: %[[G4:.*]] = trn.reshape %[[G1]] : tensor<4x1xbf16> -> tensor<4xbf16>
// CHECK-DAG: %[[LO:.*]] = trn.ge %[[T4]], %{{.*}} : tensor<4xf32> -> tensor<4xi1>
// CHECK-DAG: %[[HI:.*]] = trn.le %[[T4]], %{{.*}} : tensor<4xf32> -> tensor<4xi1>
// CHECK-DAG: %[[FL:.*]] = trn.floor %[[T4]] : tensor<4xf32>
// CHECK-DAG: %[[INT:.*]] = trn.eq %[[FL]], %[[T4]]
// CHECK-DAG: %[[GF:.*]] = trn.convert %[[G4]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-DAG: trn.full 7.000000e+00 : tensor<4xf32>
// CHECK: %[[S:.*]] = trn.select %{{.*}}, %[[GF]], %{{.*}} : tensor<4xi1>, tensor<4xf32>
// CHECK: return %[[S]], %{{.*}} : tensor<4xf32>, tensor<4x8xf32>
func.func @cross_entropy_rows(%t: tensor<4x1xf32>, %g: tensor<bf16>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %0 = trn.iota start = 0.000000e+00 step = 1.000000e+00 : tensor<8xf32>
  %1 = trn.reshape %0 : tensor<8xf32> -> tensor<1x8xf32>
  %2 = trn.broadcast %1 : tensor<1x8xf32> -> tensor<4x8xf32>
  %3 = trn.broadcast %t : tensor<4x1xf32> -> tensor<4x8xf32>
  %4 = trn.eq %2, %3 : tensor<4x8xf32> -> tensor<4x8xi1>
  %5 = trn.broadcast %g : tensor<bf16> -> tensor<4x8xbf16>
  %6 = trn.full 0.000000e+00 : tensor<bf16>
  %7 = trn.broadcast %6 : tensor<bf16> -> tensor<4x8xbf16>
  %8 = trn.select %4, %5, %7 : tensor<4x8xi1>, tensor<4x8xbf16>
  %9 = trn.convert %8 : tensor<4x8xbf16> -> tensor<4x8xf32>
  %10 = trn.reduce_sum %9 dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %10, %9 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Integer indices along dim 0, the compare written the other way round:
// no integrality test.
// CHECK-LABEL: func.func @integer_columns
// CHECK-NOT: trn.reduce_sum
// CHECK-NOT: trn.floor
// CHECK: trn.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xi1>, tensor<3xf32>
func.func @integer_columns(%t: tensor<3xi32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = trn.iota start = 0.000000e+00 step = 1.000000e+00 : tensor<5xi32>
  %1 = trn.reshape %0 : tensor<5xi32> -> tensor<5x1xi32>
  %2 = trn.broadcast %1 : tensor<5x1xi32> -> tensor<5x3xi32>
  %3 = trn.broadcast %t : tensor<3xi32> -> tensor<5x3xi32>
  %4 = trn.eq %3, %2 : tensor<5x3xi32> -> tensor<5x3xi1>
  %5 = trn.broadcast %a : tensor<3xf32> -> tensor<5x3xf32>
  %6 = trn.full 0.000000e+00 : tensor<5x3xf32>
  %7 = trn.select %4, %5, %6 : tensor<5x3xi1>, tensor<5x3xf32>
  %8 = trn.reduce_sum %7 dims = [0] : tensor<5x3xf32> -> tensor<3xf32>
  return %8 : tensor<3xf32>
}

// -----

// Not one-hot sums, left alone: the selected value varies along the row;
// the iota starts at 1; the unselected value is not zero.
// CHECK-LABEL: func.func @not_one_hot
// CHECK-COUNT-3: trn.reduce_sum
func.func @not_one_hot(%t: tensor<4x1xf32>, %x: tensor<4x8xf32>, %g: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = trn.iota start = 0.000000e+00 step = 1.000000e+00 : tensor<8xf32>
  %1 = trn.broadcast %0 : tensor<8xf32> -> tensor<4x8xf32>
  %2 = trn.broadcast %t : tensor<4x1xf32> -> tensor<4x8xf32>
  %3 = trn.eq %1, %2 : tensor<4x8xf32> -> tensor<4x8xi1>
  %z = trn.full 0.000000e+00 : tensor<4x8xf32>
  %4 = trn.select %3, %x, %z : tensor<4x8xi1>, tensor<4x8xf32>
  %5 = trn.reduce_sum %4 dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %6 = trn.iota start = 1.000000e+00 step = 1.000000e+00 : tensor<8xf32>
  %7 = trn.broadcast %6 : tensor<8xf32> -> tensor<4x8xf32>
  %8 = trn.eq %7, %2 : tensor<4x8xf32> -> tensor<4x8xi1>
  %9 = trn.broadcast %g : tensor<f32> -> tensor<4x8xf32>
  %10 = trn.select %8, %9, %z : tensor<4x8xi1>, tensor<4x8xf32>
  %11 = trn.reduce_sum %10 dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %one = trn.full 1.000000e+00 : tensor<4x8xf32>
  %12 = trn.select %3, %9, %one : tensor<4x8xi1>, tensor<4x8xf32>
  %13 = trn.reduce_sum %12 dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %5, %11, %13 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
