// A matmul's elementwise consumers (bias, activation, residual, through a
// [..., N] reshape) run on each output tile as it leaves PSUM: the result
// reaches HBM only when something else reads it.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa | FileCheck %s
// The output must pass the nisa verifiers when read back.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa | trnc-opt -split-input-file > /dev/null
// Unrolled, each tile's epilogue reads its own column's rows.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s --check-prefix=UNROLLED

// Bias add and GELU of a linear layer: the bias row is loaded once per
// column block (partition stride 0) and reused by the next row tile; only
// the pre-activation (returned) and the activation are stored, never the
// bare product. A tile's epilogue follows the next tile's PSUM copy-out
// (one tile of lag), so its stores come before the next tile's bias add.
// CHECK-LABEL: func.func @linear_gelu
// CHECK: nisa.tensor_copy %[[C:[0-9]+]] <0, [512, 1], [128, 512]>, %{{[0-9]+}} {{.*}} : <sbuf, 128, 512, bf16>, <psum, 128, 512, f32>
// CHECK: nisa.dma_copy %[[B:[0-9]+]] <0, [512, 1], [128, 512]>, %arg2 <0, [0, 1], [128, 512]>
// CHECK: nisa.tensor_tensor add %[[H:[0-9]+]] {{.*}}, %[[C]] {{.*}}, %[[B]]
// CHECK: nisa.activation gelu %[[G:[0-9]+]] {{.*}}, %[[H]] {{.*}} : <sbuf, 128, 512, bf16>, <sbuf, 128, 512, bf16>
// CHECK: nisa.dma_copy %arg3 <0, [1024, 1], [128, 512]>, %[[H]]
// CHECK: nisa.dma_copy %arg4 <0, [1024, 1], [128, 512]>, %[[G]]
// CHECK: nisa.tensor_tensor add %{{[0-9]+}} {{.*}}, %[[B]]
// CHECK-NOT: nisa.dma_copy %{{[0-9]+}} <{{.*}}>, %{{[0-9]+}} <{{.*}}> : memref<262144xbf16>
// CHECK: return
func.func @linear_gelu(%x: tensor<256x256xbf16>, %w: tensor<256x1024xbf16>, %b: tensor<1024xbf16>) -> (tensor<2x128x1024xbf16>, tensor<2x128x1024xbf16>) {
  %0 = trn.matmul %x, %w : (tensor<256x256xbf16>, tensor<256x1024xbf16>) -> tensor<256x1024xbf16>
  %1 = trn.reshape %0 : tensor<256x1024xbf16> -> tensor<2x128x1024xbf16>
  %2 = trn.broadcast %b : tensor<1024xbf16> -> tensor<2x128x1024xbf16>
  %3 = trn.add %1, %2 : tensor<2x128x1024xbf16>
  %4 = trn.convert %3 : tensor<2x128x1024xbf16> -> tensor<2x128x1024xf32>
  %5 = trn.gelu %4 : tensor<2x128x1024xf32>
  %6 = trn.convert %5 : tensor<2x128x1024xf32> -> tensor<2x128x1024xbf16>
  return %3, %6 : tensor<2x128x1024xbf16>, tensor<2x128x1024xbf16>
}

// -----

// A residual add: the other input is loaded per tile. The product is also
// returned, so it is stored too.
// CHECK-LABEL: func.func @residual
// CHECK: nisa.matmul
// CHECK: nisa.dma_copy %[[R:[0-9]+]] {{.*}}, %arg2 <0, [128, 1], [128, 128]>
// CHECK: nisa.tensor_tensor add %[[S:[0-9]+]] {{.*}}, %[[C:[0-9]+]] {{.*}}, %[[R]]
// CHECK-DAG: nisa.dma_copy %arg3 <0, [128, 1], [128, 128]>, %[[C]]
// CHECK-DAG: nisa.dma_copy %arg4 <0, [128, 1], [128, 128]>, %[[S]]
func.func @residual(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>, %r: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %0 = trn.matmul %x, %w : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %1 = trn.add %0, %r : tensor<128x128xf32>
  return %0, %1 : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// An op that also reads a value computed after the matmul (a second
// matmul) is not part of the first one's epilogue: the first result is
// stored, and the op is the second matmul's epilogue.
// CHECK-LABEL: func.func @needs_later_value
// CHECK: nisa.matmul
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [128, 1], [128, 128]>, %{{[0-9]+}} <0, [128, 1], [128, 128]> : memref<16384xf32>
// CHECK: nisa.matmul
// CHECK: nisa.tensor_tensor multiply
// CHECK: return
func.func @needs_later_value(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %0 = trn.matmul %x, %w : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %1 = trn.matmul %w, %x : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %2 = trn.mul %0, %1 : tensor<128x128xf32>
  return %2 : tensor<128x128xf32>
}

// -----

// One tile of lag: the second tile's PSUM copy-out is emitted before the
// first tile's epilogue, so in program order it does not queue behind it.
// A bf16 result widened to f32 is read as it is (no widening copy).
// CHECK-LABEL: func.func @lagged_epilogue
// CHECK: nisa.tensor_copy %[[C0:[0-9]+]] {{.*}} : <sbuf, 128, 512, bf16>, <psum, 128, 512, f32>
// CHECK: nisa.tensor_copy %[[C1:[0-9]+]] {{.*}} : <sbuf, 128, 512, bf16>, <psum, 128, 512, f32>
// CHECK-NOT: nisa.tensor_copy {{.*}} <sbuf, 128, 512, f32>, <sbuf, 128, 512, bf16>
// CHECK: nisa.activation exp {{.*}}, %[[C0]]
// CHECK: nisa.activation exp {{.*}}, %[[C1]]
// CHECK: return
func.func @lagged_epilogue(%x: tensor<128x128xbf16>, %w: tensor<128x1024xbf16>) -> tensor<128x1024xbf16> {
  %0 = trn.matmul %x, %w : (tensor<128x128xbf16>, tensor<128x1024xbf16>) -> tensor<128x1024xbf16>
  %1 = trn.convert %0 : tensor<128x1024xbf16> -> tensor<128x1024xf32>
  %2 = trn.exp %1 : tensor<128x1024xf32>
  %3 = trn.convert %2 : tensor<128x1024xf32> -> tensor<128x1024xbf16>
  return %3 : tensor<128x1024xbf16>
}

// -----

// The group is formed on trn, but the output's layout (batch and rows
// swapped in memory) has no [M, N] walk, so the epilogue plan refuses: the
// product goes to scratch and the members run as one elementwise group
// after it, storing through the output's strides.
// CHECK-LABEL: func.func @epilogue_output_without_mn_walk
// CHECK: %[[P:[0-9]+]] = nisa.dram_alloc : memref<131072xf32>
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.matmul
// CHECK: nisa.dma_copy %[[P]]
// CHECK: nisa.dma_copy %{{[0-9]+}} {{.*}}, %[[P]]
// CHECK: nisa.tensor_tensor add
// CHECK: nisa.dma_copy %arg3 <0, [1024, 512, 1], [128, 2, 512]>
func.func @epilogue_output_without_mn_walk(%x: tensor<256x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> (tensor<2x128x512xf32> {trn.stride = array<i64: 512, 1024, 1>}) {
  %0 = trn.matmul %x, %w : (tensor<256x256xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
  %1 = trn.reshape %0 : tensor<256x512xf32> -> tensor<2x128x512xf32>
  %2 = trn.broadcast %b : tensor<512xf32> -> tensor<2x128x512xf32>
  %3 = trn.add %1, %2 : tensor<2x128x512xf32>
  return %3 : tensor<2x128x512xf32>
}

// -----

// Eight row tiles of a linear layer with bias and GELU, as a software-
// pipelined loop: a tile's epilogue runs one tile late, so the steady state
// starts at tile 2. Tiles 0 and 1 are emitted alone; tiles 2..7 are a loop
// whose iter_args are what the previous iteration left: the GELU tile still
// to store, the copied-out product whose epilogue is still to run, and the
// bias row (loaded once, by tile 0). After the loop, the last tile's
// epilogue and the two last stores.
// CHECK-LABEL: func.func @linear_gelu_rows
// CHECK: nisa.dma_copy %[[B:[0-9]+]] <0, [512, 1], [128, 512]>, %arg2 <0, [0, 1], [128, 512]>
// CHECK: scf.for %[[I:[a-z0-9]+]] = %c0 to %c6 step %c1 iter_args(%[[G:[a-z0-9]+]] = %{{[0-9]+}}, %[[P:[a-z0-9]+]] = %{{[0-9]+}}, %[[BB:[a-z0-9]+]] = %[[B]])
// CHECK: nisa.hbm_window %arg0[%[[I]] * 32768]
// CHECK: %[[Y:[0-9]+]] = nisa.hbm_window %arg3[%[[I]] * 65536]
// CHECK: nisa.dma_copy %[[Y]] <0, [512, 1], [128, 512]>, %[[G]]
// CHECK: nisa.tensor_tensor add %{{[0-9]+}} {{.*}}, %[[P]] {{.*}}, %[[BB]]
// CHECK: nisa.activation gelu
// CHECK: scf.yield
// CHECK: nisa.activation gelu
// CHECK: nisa.dma_copy %arg3 <393216, [512, 1], [128, 512]>
// CHECK: nisa.dma_copy %arg3 <458752, [512, 1], [128, 512]>
// CHECK-NOT: nisa.dma_copy %arg3
func.func @linear_gelu_rows(%x: tensor<1024x256xbf16>, %w: tensor<256x512xbf16>, %b: tensor<512xbf16>) -> tensor<1024x512xbf16> {
  %0 = trn.matmul %x, %w : (tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1024x512xbf16>
  %2 = trn.broadcast %b : tensor<512xbf16> -> tensor<1024x512xbf16>
  %3 = trn.add %0, %2 : tensor<1024x512xbf16>
  %4 = trn.convert %3 : tensor<1024x512xbf16> -> tensor<1024x512xf32>
  %5 = trn.gelu %4 : tensor<1024x512xf32>
  %6 = trn.convert %5 : tensor<1024x512xf32> -> tensor<1024x512xbf16>
  return %6 : tensor<1024x512xbf16>
}

// -----

// A bias row is loaded once per column tile and kept for the later blocks
// of rows (A^T resident in blocks of 512 rows: 640 = 512 + 128). The second
// block's column tiles reuse those rows, one per column: a tile loop over
// its columns would repeat the row of the one column its body was emitted
// for, so that sweep stays unrolled (tryLoop gives up on a reused row).
// Before, columns 3 and 4 of the second block were added column 2's bias.
// CHECK-LABEL: func.func @bias_rows_of_a_later_block
// UNROLLED-LABEL: func.func @bias_rows_of_a_later_block
// UNROLLED: nisa.dma_copy %[[B0:[0-9]+]] {{.*}}, %arg2 <0, [0, 1], [128, 512]>
// UNROLLED: nisa.dma_copy %[[B1:[0-9]+]] {{.*}}, %arg2 <512, [0, 1], [128, 512]>
// UNROLLED: nisa.dma_copy %[[B2:[0-9]+]] {{.*}}, %arg2 <1024, [0, 1], [128, 512]>
// UNROLLED: nisa.dma_copy %[[B3:[0-9]+]] {{.*}}, %arg2 <1536, [0, 1], [128, 512]>
// UNROLLED: nisa.dma_copy %[[B4:[0-9]+]] {{.*}}, %arg2 <2048, [0, 1], [128, 512]>
// The second block's A rows (from row 512), then its five bias adds.
// UNROLLED: %arg0 <2097152, [4096, 1], [128, 1024]>
// UNROLLED: nisa.tensor_tensor add {{.*}}, %[[B0]] <
// UNROLLED: nisa.tensor_tensor add {{.*}}, %[[B1]] <
// UNROLLED: nisa.tensor_tensor add {{.*}}, %[[B2]] <
// UNROLLED: nisa.tensor_tensor add {{.*}}, %[[B3]] <
// UNROLLED: nisa.tensor_tensor add {{.*}}, %[[B4]] <
// UNROLLED-NOT: nisa.tensor_tensor add
// UNROLLED: return
func.func @bias_rows_of_a_later_block(%x: tensor<640x4096xf32>, %w: tensor<2560x4096xf32>, %b: tensor<2560xf32>) -> tensor<640x2560xf32> {
  %wt = trn.transpose %w permutation = [1, 0] : tensor<2560x4096xf32> -> tensor<4096x2560xf32>
  %0 = trn.matmul %x, %wt : (tensor<640x4096xf32>, tensor<4096x2560xf32>) -> tensor<640x2560xf32>
  %1 = trn.broadcast %b : tensor<2560xf32> -> tensor<640x2560xf32>
  %2 = trn.add %0, %1 : tensor<640x2560xf32>
  return %2 : tensor<640x2560xf32>
}
