// K = 30000 f32: a resident [K, 128] strip of A^T would take 235 x 128 x 4 =
// 120 KiB per partition, beyond half of SBUF, so nothing is resident: per
// (m, n) tile both operands stream in chunks of 8 k tiles (1024 contiguous
// floats of A per row load). 2 m tiles x 235 k tiles = 470 products (2
// groups) and 470 transposes; B is loaded once per m tile.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.matmul" | FileCheck %s --check-prefix=ALL
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c " transpose :" | FileCheck %s --check-prefix=TRANSPOSES
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.matmul" | grep -c accumulate | FileCheck %s --check-prefix=ACC
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.dma_copy .*%arg1" | FileCheck %s --check-prefix=BLOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// ALL: 940
// TRANSPOSES: 470
// ACC: 468
// BLOADS: 470

// CHECK-LABEL: func.func @streamed
// CHECK: nisa.dma_copy %{{.*}} <0, [1024, 1], [128, 1024]>, %arg0 <0, [30000, 1], [128, 1024]>
// CHECK: nisa.dma_copy %{{.*}} <0, [3, 1], [128, 3]>, %arg1 <0, [3, 1], [128, 3]>
// The K tail: 30000 - 234 x 128 = 48 rows.
// CHECK: nisa.matmul {{.*}} accumulate : <psum, 128, 3, f32>, <sbuf, 48, 128, f32>, <sbuf, 48, 3, f32>
func.func @streamed(%a: tensor<130x30000xf32>, %b: tensor<30000x3xf32>) -> tensor<130x3xf32> {
  %0 = trn.matmul %a, %b : (tensor<130x30000xf32>, tensor<30000x3xf32>) -> tensor<130x3xf32>
  return %0 : tensor<130x3xf32>
}
