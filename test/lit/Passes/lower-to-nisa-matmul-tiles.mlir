// 300x700x600: 3 M tiles (128, 128, 44) x 2 N tiles (512, 88) accumulation
// groups of 6 K tiles (5 x 128 + 60): 36 matmuls, 6 start a group, 30 add.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.matmul" | FileCheck %s --check-prefix=ALL
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.matmul" | grep -c accumulate | FileCheck %s --check-prefix=ACC
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.tensor_copy" | FileCheck %s --check-prefix=GROUPS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s
// ALL: 36
// ACC: 30
// GROUPS: 6

// The stationary strip of an M block (6 tiles of A^T) is loaded once and
// reused by both N tiles; partial tiles at the edges.
// CHECK-LABEL: func.func @matmul_tiled
// CHECK: nisa.dma_copy %{{.*}} <0, [128, 1], [128, 128]>, %arg0 <0, [1, 700], [128, 128]>
// CHECK: nisa.dma_copy %{{.*}} <0, [128, 1], [60, 128]>, %arg0 <640, [1, 700], [60, 128]>
// CHECK: nisa.alloc : <psum, 128, 512, f32>
// CHECK: nisa.alloc : <psum, 128, 88, f32>
// CHECK: nisa.alloc : <psum, 44, 88, f32>
// CHECK: nisa.matmul {{.*}} : <psum, 44, 88, f32>, <sbuf, 60, 44, f32>, <sbuf, 60, 88, f32>
// CHECK: nisa.dma_copy %arg2 <154112, [600, 1], [44, 88]>
func.func @matmul_tiled(%a: tensor<300x700xf32>, %b: tensor<700x600xf32>) -> tensor<300x600xf32> {
  %0 = trn.matmul %a, %b : (tensor<300x700xf32>, tensor<700x600xf32>) -> tensor<300x600xf32>
  return %0 : tensor<300x600xf32>
}
