// x @ W^T with 2048 tokens: the weight W [1024, 256] is the moving operand and
// needs a transpose. The planner keeps W^T [256, 1024] resident (4 KiB per
// partition) and sweeps the 16 token tiles past it, so W is read (8 row
// loads) and transposed (2 k x 8 row blocks = 16) once, not once per block
// of tokens; x costs 16 row loads and 16 x 2 = 32 transposes. Products: 16 m
// tiles x 2 n tiles x 2 k tiles = 64, 32 of them accumulating. (Counted
// unrolled: the tile phase emits token tiles 1..15 as one loop, LOOP.)
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c "nisa.matmul" | FileCheck %s --check-prefix=ALL
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c " transpose :" | FileCheck %s --check-prefix=TRANSPOSES
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep "nisa.matmul" | grep -c accumulate | FileCheck %s --check-prefix=ACC
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c "nisa.dma_copy .*%arg1" | FileCheck %s --check-prefix=WLOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c "nisa.dma_copy .*%arg0" | FileCheck %s --check-prefix=XLOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | grep -c "nisa.affine_select" | FileCheck %s --check-prefix=IDENTITY
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s --check-prefix=LOOP
// ALL: 112
// TRANSPOSES: 48
// ACC: 32
// WLOADS: 8
// XLOADS: 16
// IDENTITY: 1

// Rows of W: 128 rows of 256 contiguous bf16 (512 B) each.
// CHECK-LABEL: func.func @linear
// CHECK: nisa.dma_copy %{{.*}} <0, [256, 1], [128, 256]>, %arg1 <0, [256, 1], [128, 256]>
// W^T's k tile 0 fills a [128, 1024] resident tile in two PSUM banks.
// CHECK: nisa.tensor_copy %[[WT0:.*]] <0, [1024, 1], [128, 512]>, %{{.*}} on
// CHECK: nisa.tensor_copy %[[WT0]] <512, [1024, 1], [128, 512]>, %{{.*}} on
// The last token tile reads the second n tile of the resident W^T.
// CHECK: nisa.dma_copy %{{.*}}, %arg0 <491520, [256, 1], [128, 256]>
// CHECK: nisa.matmul %{{.*}}, %[[WT0]] <512, [1024, 1], [128, 512]> :
func.func @linear(%x: tensor<2048x256xbf16>, %w: tensor<1024x256xbf16>) -> tensor<2048x1024xbf16> {
  %wt = trn.transpose %w permutation = [1, 0] : tensor<1024x256xbf16> -> tensor<256x1024xbf16>
  %0 = trn.matmul %x, %wt : (tensor<2048x256xbf16>, tensor<256x1024xbf16>) -> tensor<2048x1024xbf16>
  return %0 : tensor<2048x1024xbf16>
}

// The token tiles as the tile phase emits them: tile 0 alone, then a loop of
// 15 (tiles 1..15) whose body is tile 1, x and the result walked through
// windows moving 128 rows; the body stores the tile the previous iteration
// left (the loop's iter_arg, at tile 0's position) after its first product,
// and yields its own last, which is stored after the loop.
// LOOP-LABEL: func.func @linear
// LOOP: nisa.dma_copy %{{.*}}, %arg0 <0, [256, 1], [128, 256]>
// LOOP: %[[LAST:[0-9]+]] = scf.for %[[I:[a-z0-9]+]] = %c0 to %c15 step %c1 iter_args(%[[PREV:[a-z0-9_]+]] = %{{[0-9]+}})
// LOOP-DAG: %[[X:[0-9]+]] = nisa.hbm_window %arg0[%[[I]] * 32768]
// LOOP-DAG: %[[Y:[0-9]+]] = nisa.hbm_window %arg2[%[[I]] * 131072]
// LOOP: nisa.dma_copy %{{.*}}, %[[X]] <32768, [256, 1], [128, 256]>
// LOOP: nisa.matmul
// LOOP: nisa.dma_copy %[[Y]] <512, [1024, 1], [128, 512]>, %[[PREV]]
// LOOP: scf.yield
// LOOP: nisa.dma_copy %arg2 <1966592, [1024, 1], [128, 512]>, %[[LAST]]
