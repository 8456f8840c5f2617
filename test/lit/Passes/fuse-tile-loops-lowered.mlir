// The lowering's loops, fused (fuse-tile-loops.mlir tests the pass on
// hand-written loops): a layer norm's row group and the matmul reading its
// rows walk the same 128-row tiles, so the matmul's loop joins the layer
// norm's; the matmul's weights and first row tile move above it.
// RUN: trnc-opt %s --trnc-form-fusion-groups --trnc-tile-lower-to-nisa -canonicalize -cse --trnc-fuse-tile-loops | FileCheck %s
// RUN: trnc-opt %s --trnc-form-fusion-groups --trnc-tile-lower-to-nisa -canonicalize -cse --trnc-fuse-tile-loops | trnc-opt > /dev/null
// Unrolled, each normalised row tile goes straight to the matmul and the
// scratch between the two goes, even with 2% of SBUF for forwarded tiles
// (unfused, the layer norm's seven stored tiles would wait for the matmul's
// loop, and the scratch stays):
// RUN: trnc-opt %s --trnc-form-fusion-groups --trnc-tile-lower-to-nisa -canonicalize -cse --trnc-fuse-tile-loops --trnc-unroll-tile-loops --trnc-fuse-forward-stores=memory-share=0.02 | FileCheck %s --check-prefix=FWD

// CHECK-LABEL: func.func @norm_then_project
// CHECK: nisa.dram_alloc : memref<262144xbf16>
// CHECK: nisa.matmul
// CHECK: scf.for
// CHECK: nisa.activation rsqrt
// CHECK: nisa.dma_copy %{{[0-9]+}} <32768, [256, 1], [128, 256]>
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, [256, 1], [128, 256]>, %{{[0-9]+}} <32768, [256, 1], [128, 256]>
// CHECK: nisa.matmul {{.*}} transpose
// CHECK: scf.yield
// CHECK-NOT: scf.for
// FWD-LABEL: func.func @norm_then_project
// FWD-NOT: nisa.dram_alloc
// FWD: return
func.func @norm_then_project(%x: tensor<1024x256xbf16>, %g: tensor<256xf32>, %w: tensor<256x512xbf16>) -> tensor<1024x512xbf16> {
  %0 = trn.convert %x : tensor<1024x256xbf16> -> tensor<1024x256xf32>
  %1 = trn.reduce_sum %0 dims = [1] : tensor<1024x256xf32> -> tensor<1024xf32>
  %2 = trn.reshape %1 : tensor<1024xf32> -> tensor<1024x1xf32>
  %3 = trn.mul_scalar %2, 3.906250e-03 : tensor<1024x1xf32>
  %4 = trn.broadcast %3 : tensor<1024x1xf32> -> tensor<1024x256xf32>
  %5 = trn.sub %0, %4 : tensor<1024x256xf32>
  %6 = trn.mul %5, %5 : tensor<1024x256xf32>
  %7 = trn.reduce_sum %6 dims = [1] : tensor<1024x256xf32> -> tensor<1024xf32>
  %8 = trn.reshape %7 : tensor<1024xf32> -> tensor<1024x1xf32>
  %9 = trn.mul_scalar %8, 3.906250e-03 : tensor<1024x1xf32>
  %10 = trn.add_scalar %9, 1.000000e-05 : tensor<1024x1xf32>
  %11 = trn.rsqrt %10 : tensor<1024x1xf32>
  %12 = trn.broadcast %11 : tensor<1024x1xf32> -> tensor<1024x256xf32>
  %13 = trn.mul %5, %12 : tensor<1024x256xf32>
  %14 = trn.broadcast %g : tensor<256xf32> -> tensor<1024x256xf32>
  %15 = trn.mul %13, %14 : tensor<1024x256xf32>
  %16 = trn.convert %15 : tensor<1024x256xf32> -> tensor<1024x256xbf16>
  %17 = trn.matmul %16, %w : (tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1024x512xbf16>
  return %17 : tensor<1024x512xbf16>
}

// The layer norm of token plus position embeddings (the position table
// broadcast over the batch): its row loop walks the table with a periodic
// window (four row tiles per sequence, the loop starting one tile into
// it), so it is one flat loop over the 1024 rows, like the matmul's, and
// the two fuse; the normalised rows never reach HBM.
// CHECK-LABEL: func.func @embed_norm_then_project
// CHECK: scf.for
// CHECK: nisa.hbm_window %arg1[%{{.*}} * 32768 period 4 phase 1]
// CHECK: nisa.activation rsqrt
// CHECK: nisa.matmul {{.*}} transpose
// CHECK: scf.yield
// CHECK-NOT: scf.for
// FWD-LABEL: func.func @embed_norm_then_project
// FWD-NOT: nisa.dram_alloc
// FWD: return
func.func @embed_norm_then_project(%x: tensor<2x512x256xbf16>, %pos: tensor<512x256xbf16>, %g: tensor<256xf32>, %w: tensor<256x512xbf16>) -> tensor<1024x512xbf16> {
  %pb = trn.broadcast %pos : tensor<512x256xbf16> -> tensor<2x512x256xbf16>
  %e = trn.add %x, %pb : tensor<2x512x256xbf16>
  %0 = trn.convert %e : tensor<2x512x256xbf16> -> tensor<2x512x256xf32>
  %1 = trn.reduce_sum %0 dims = [2] : tensor<2x512x256xf32> -> tensor<2x512xf32>
  %2 = trn.reshape %1 : tensor<2x512xf32> -> tensor<2x512x1xf32>
  %3 = trn.mul_scalar %2, 3.906250e-03 : tensor<2x512x1xf32>
  %4 = trn.broadcast %3 : tensor<2x512x1xf32> -> tensor<2x512x256xf32>
  %5 = trn.sub %0, %4 : tensor<2x512x256xf32>
  %6 = trn.mul %5, %5 : tensor<2x512x256xf32>
  %7 = trn.reduce_sum %6 dims = [2] : tensor<2x512x256xf32> -> tensor<2x512xf32>
  %8 = trn.reshape %7 : tensor<2x512xf32> -> tensor<2x512x1xf32>
  %9 = trn.mul_scalar %8, 3.906250e-03 : tensor<2x512x1xf32>
  %10 = trn.add_scalar %9, 1.000000e-05 : tensor<2x512x1xf32>
  %11 = trn.rsqrt %10 : tensor<2x512x1xf32>
  %12 = trn.broadcast %11 : tensor<2x512x1xf32> -> tensor<2x512x256xf32>
  %13 = trn.mul %5, %12 : tensor<2x512x256xf32>
  %14 = trn.broadcast %g : tensor<256xf32> -> tensor<2x512x256xf32>
  %15 = trn.mul %13, %14 : tensor<2x512x256xf32>
  %16 = trn.convert %15 : tensor<2x512x256xf32> -> tensor<2x512x256xbf16>
  %17 = trn.reshape %16 : tensor<2x512x256xbf16> -> tensor<1024x256xbf16>
  %18 = trn.matmul %17, %w : (tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1024x512xbf16>
  return %18 : tensor<1024x512xbf16>
}
