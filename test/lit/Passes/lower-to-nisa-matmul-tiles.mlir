// 300x700x600 f32, A row-major: A^T is built on the Tensor Engine. The
// planner keeps A^T [700, 300] resident (one block of 3 m tiles: 128, 128,
// 44) and streams B: per N tile (512, 88) 6 K tiles (5 x 128 + 60), each
// B tile used by the 3 m tiles right after its load: 36 product matmuls,
// 6 of them start a group, 30 add. A^T costs 6 x 3 = 18 transposes (one per
// 128 x 128 block, never accumulating) and 6 PSUM copies; the 6 results
// are copied out of PSUM too, marked to alternate (trnc.engine_alternate:
// the A^T copies and the results, one stream of 12), which the unroll
// phase turns into Scalar, Vector, Scalar, ... (6 each).
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.tensor_copy" | grep -c "trnc.engine_alternate = 0" | FileCheck %s --check-prefix=MARKED
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.matmul" | FileCheck %s --check-prefix=ALL
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.matmul" | grep -c " transpose :" | FileCheck %s --check-prefix=TRANSPOSES
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.matmul" | grep -c accumulate | FileCheck %s --check-prefix=ACC
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep "nisa.tensor_copy" | grep -c "on vector" | FileCheck %s --check-prefix=VECTOR
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep "nisa.tensor_copy" | grep -c "on scalar" | FileCheck %s --check-prefix=SCALAR
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.dma_copy" | FileCheck %s --check-prefix=DMAS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s
// ALL: 54
// TRANSPOSES: 18
// ACC: 30
// MARKED: 12
// VECTOR: 6
// SCALAR: 6
// 3 row loads of A, 12 B tiles, 6 stores.
// DMAS: 21

// CHECK-LABEL: func.func @matmul_tiled
// The identity: ones, then the diagonal kept.
// CHECK: nisa.memset %[[ONES:.*]] <0, [128, 1], [128, 128]>, 1.000000e+00 on gpsimd : <sbuf, 128, 128, f32>
// CHECK: nisa.affine_select is_equal %[[ID:.*]] <0, [128, 1], [128, 128]>, %[[ONES]] {{.*}} coefs = [-1, 1], fill = 0.000000e+00
// Contiguous rows of A (700 elements each), not a column gather.
// CHECK: nisa.dma_copy %[[R0:.*]] <0, [700, 1], [128, 700]>, %arg0 <0, [700, 1], [128, 700]>
// CHECK: nisa.dma_copy %{{.*}} <0, [700, 1], [128, 700]>, %arg0 <89600, [700, 1], [128, 700]>
// CHECK: nisa.dma_copy %[[R2:.*]] <0, [700, 1], [44, 700]>, %arg0 <179200, [700, 1], [44, 700]>
// Block (k 0, rows 0..127) transposed into columns 0..127 of a PSUM bank.
// CHECK: nisa.matmul %[[T:.*]] <0, [300, 1], [128, 128]>, %[[R0]] <0, [700, 1], [128, 128]>, %[[ID]] <0, [128, 1], [128, 128]> transpose : <psum, 128, 300, f32>
// The ragged row block uses a 44 x 44 window of the identity.
// CHECK: nisa.matmul %[[T]] <256, [300, 1], [128, 44]>, %[[R2]] <0, [700, 1], [44, 128]>, %[[ID]] <0, [128, 1], [44, 44]> transpose
// CHECK: nisa.tensor_copy %[[AT0:.*]] <0, [300, 1], [128, 300]>, %[[T]] <0, [300, 1], [128, 300]> on scalar {trnc.engine_alternate = 0 : i64} : <sbuf, 128, 300, f32>, <psum, 128, 300, f32>
// The K tail: 60 contraction rows.
// CHECK: nisa.matmul %{{.*}} <0, [300, 1], [60, 128]>, %[[R0]] <640, [700, 1], [128, 60]>, %[[ID]] <0, [128, 1], [128, 128]> transpose : <psum, 60, 300, f32>
// One B tile, then its three uses (m tiles of the resident A^T block).
// CHECK: nisa.dma_copy %[[B0:.*]] <0, [512, 1], [128, 512]>, %arg1 <0, [600, 1], [128, 512]>
// CHECK-NEXT: nisa.matmul %{{.*}} <0, [512, 1], [128, 512]>, %[[AT0]] <0, [300, 1], [128, 128]>, %[[B0]] <0, [512, 1], [128, 512]> :
// CHECK-NEXT: nisa.matmul %{{.*}} <0, [512, 1], [128, 512]>, %[[AT0]] <128, [300, 1], [128, 128]>, %[[B0]] <0, [512, 1], [128, 512]> :
// CHECK-NEXT: nisa.matmul %{{.*}} <0, [512, 1], [44, 512]>, %[[AT0]] <256, [300, 1], [128, 44]>, %[[B0]] <0, [512, 1], [128, 512]> :
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.dma_copy %{{.*}} <0, [512, 1], [128, 512]>, %arg1 <76800, [600, 1], [128, 512]>
// CHECK: nisa.dma_copy %arg2 <154112, [600, 1], [44, 88]>
func.func @matmul_tiled(%a: tensor<300x700xf32>, %b: tensor<700x600xf32>) -> tensor<300x600xf32> {
  %0 = trn.matmul %a, %b : (tensor<300x700xf32>, tensor<700x600xf32>) -> tensor<300x600xf32>
  return %0 : tensor<300x600xf32>
}
