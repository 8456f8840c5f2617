// The compiler's phases, each reachable with trnc-compile{compile-to=...}.
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=group})' | FileCheck %s --check-prefix=GROUP
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=tile})' | FileCheck %s --check-prefix=TILE
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=fuse})' | FileCheck %s --check-prefix=FUSE
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=unroll})' | FileCheck %s --check-prefix=UNROLL
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=allocate})' | FileCheck %s --check-prefix=ALLOC
// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile)' | FileCheck %s --check-prefix=ALL
// RUN: not trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=bogus})' 2>&1 | FileCheck %s --check-prefix=BAD

// group: still trn; exp and tanh in one fusion group, the softmax alone.
// GROUP-NOT: nisa.{{[a-z_]+}} %
// GROUP: trn.softmax
// GROUP-NEXT: trn.fusion_group "elementwise"
// GROUP-NEXT: trn.exp
// GROUP-NEXT: trn.tanh
// GROUP-NEXT: trn.yield
// GROUP-NOT: nisa.{{[a-z_]+}} %
// tile: the softmax and the elementwise group (exp, tanh: one loop over
// tiles, exp's tile straight into tanh) each on their own, the softmax's
// result through HBM scratch.
// TILE: nisa.dram_alloc
// TILE-COUNT-3: nisa.dma_copy
// TILE: nisa.activation exp %[[E:[0-9]+]]
// TILE-NEXT: nisa.alloc
// TILE-NEXT: nisa.activation tanh %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[E]]
// fuse: loops joined (one tile here, so no loops: fuse-tile-loops.mlir),
// and the softmax's stored tile is the tile exp reads; no scratch left.
// FUSE-NOT: nisa.dram_alloc
// FUSE: nisa.tensor_scalar %[[S:[0-9]+]] {{.*}} divide 0.000000e+00 per_partition
// FUSE-NOT: nisa.dma_copy
// FUSE: nisa.activation exp %{{[0-9]+}} <0, [512, 1], [128, 512]>, %[[S]]
// unroll: no loops left to unroll here (unroll-tile-loops.mlir).
// UNROLL-NOT: scf.for
// UNROLL: nisa.activation exp
// allocate: addresses, no semaphores yet.
// ALLOC: nisa.alloc {address =
// ALLOC-NOT: signal
// ALL: signal =
// BAD: for the --compile-to option: Cannot find option named 'bogus'!
func.func @chain(%x: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %s = trn.softmax %x dim = 1 : tensor<128x512xf32>
  %0 = trn.exp %s : tensor<128x512xf32>
  %1 = trn.tanh %0 : tensor<128x512xf32>
  return %1 : tensor<128x512xf32>
}
