// x @ W^T with 2048 tokens: the weight W [1024, 256] is the moving operand and
// needs a transpose. The planner keeps W^T [256, 1024] resident (4 KiB per
// partition) and sweeps the 16 token tiles past it, so W is read (8 row
// loads) and transposed (2 k x 8 row blocks = 16) once, not once per block
// of tokens; x costs 16 row loads and 16 x 2 = 32 transposes. Products: 16 m
// tiles x 2 n tiles x 2 k tiles = 64, 32 of them accumulating.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.matmul" | FileCheck %s --check-prefix=ALL
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c " transpose :" | FileCheck %s --check-prefix=TRANSPOSES
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep "nisa.matmul" | grep -c accumulate | FileCheck %s --check-prefix=ACC
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.dma_copy .*%arg1" | FileCheck %s --check-prefix=WLOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.dma_copy .*%arg0" | FileCheck %s --check-prefix=XLOADS
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | grep -c "nisa.affine_select" | FileCheck %s --check-prefix=IDENTITY
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
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
