// 2048x4096x2560 f32 with A^T resident in blocks of 512 rows: the blocks
// are a loop too, around the loop over each block's column tiles. Block 0
// runs as it is (its column loop after its first tile); blocks 1..3 are
// one scf.for whose body is block 1: A and C move a block per iteration
// (512 rows: 2097152 and 1310720 elements), and inside it the column loop
// moves B and a window of C's window by a column tile (512). The pending
// stores of a block's last column tiles are the iter_args of both loops.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// Unrolled: every product and transpose of the 16 x 5 tiles (32 k tiles
// each, A^T built by 16 x 32 transposes), every tile stored once.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c "nisa.matmul" | FileCheck %s --check-prefix=MATMULS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c "nisa.dma_copy %arg2" | FileCheck %s --check-prefix=STORES
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s --check-prefix=UNROLLED
// MATMULS: 3072
// STORES: 80

// CHECK-LABEL: func.func @nested
// CHECK: scf.for %[[J0:[a-z0-9]+]] = %{{.*}} to %c4 step
// CHECK: nisa.hbm_window %arg1[%[[J0]] * 512]
// CHECK: nisa.hbm_window %arg2[%[[J0]] * 512]
// CHECK: scf.for %[[I:[a-z0-9]+]] = %{{.*}} to %c3 step %{{.*}} iter_args(
// CHECK: nisa.hbm_window %arg0[%[[I]] * 2097152]
// CHECK: %[[C:[0-9]+]] = nisa.hbm_window %arg2[%[[I]] * 1310720]
// CHECK: scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %c4_{{[0-9]+}} step %{{.*}} iter_args(
// CHECK: nisa.hbm_window %arg1[%[[J]] * 512]
// CHECK: nisa.hbm_window %[[C]][%[[J]] * 512]
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: return

// The last block's last column tile, stored last: rows 1920.., columns
// 2048.. of the [2048, 2560] result.
// UNROLLED-LABEL: func.func @nested
// UNROLLED-NOT: scf.for
// UNROLLED: nisa.dma_copy %arg2 <4917248, [2560, 1], [128, 512]>
// UNROLLED-NEXT: return
func.func @nested(%a: tensor<2048x4096xf32>, %b: tensor<4096x2560xf32>) -> tensor<2048x2560xf32> {
  %0 = trn.matmul %a, %b : (tensor<2048x4096xf32>, tensor<4096x2560xf32>) -> tensor<2048x2560xf32>
  return %0 : tensor<2048x2560xf32>
}
