// 1100x4096x1024 f32: B [4096, 1024] does not fit beside the A^T strip in
// half of SBUF, so A^T stays resident in blocks of 512 rows (4 PSUM banks of
// m tiles; the other 4 let the next n tile accumulate while this one drains)
// and B streams past each block: 3 blocks (512, 512, 76) x 2 n tiles x 32 k
// tiles = 192 B loads, each used by the block's m tiles right after it
// lands. A is read and transposed once: 9 row blocks x 4 row chunks of 1024
// contiguous floats = 36 loads, 9 x 32 = 288 transposes. 9 m tiles x 2 x 32
// = 576 products, 18 groups.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.matmul" | FileCheck %s --check-prefix=ALL
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c " transpose :" | FileCheck %s --check-prefix=TRANSPOSES
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.matmul" | grep -c accumulate | FileCheck %s --check-prefix=ACC
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.dma_copy .*%arg1" | FileCheck %s --check-prefix=BLOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.dma_copy .*%arg0" | FileCheck %s --check-prefix=ALOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// ALL: 864
// TRANSPOSES: 288
// ACC: 558
// BLOADS: 192
// ALOADS: 36

// CHECK-LABEL: func.func @blocks
// A row chunk: 1024 contiguous floats (4 KiB) per partition.
// CHECK: nisa.dma_copy %{{.*}} <0, [1024, 1], [128, 1024]>, %arg0 <0, [4096, 1], [128, 1024]>
// A B tile of the first block feeds its four m tiles.
// CHECK: nisa.dma_copy %[[B:.*]] <0, [512, 1], [128, 512]>, %arg1 <0, [1024, 1], [128, 512]>
// CHECK-NEXT: nisa.matmul %{{.*}}, %[[AT:.*]] <0, [512, 1], [128, 128]>, %[[B]]
// CHECK-NEXT: nisa.matmul %{{.*}}, %[[AT]] <128, [512, 1], [128, 128]>, %[[B]]
// CHECK-NEXT: nisa.matmul %{{.*}}, %[[AT]] <256, [512, 1], [128, 128]>, %[[B]]
// CHECK-NEXT: nisa.matmul %{{.*}}, %[[AT]] <384, [512, 1], [128, 128]>, %[[B]]
// The last block: 76 rows, one m tile.
// CHECK: nisa.matmul %{{.*}} : <psum, 76, 512, f32>, <sbuf, 128, 76, f32>, <sbuf, 128, 512, f32>
func.func @blocks(%a: tensor<1100x4096xf32>, %b: tensor<4096x1024xf32>) -> tensor<1100x1024xf32> {
  %0 = trn.matmul %a, %b : (tensor<1100x4096xf32>, tensor<4096x1024xf32>) -> tensor<1100x1024xf32>
  return %0 : tensor<1100x1024xf32>
}
