// Weight gradients marked for the list scheduler (DeferredProducts.h): a
// matmul (or a sum over the rows) whose value reaches only the results
// (through views) gets
// trnc.defer_until = its id on every instruction it lowers to; the first
// instruction after the next product that is not one (here the data
// gradient dx, then its row sums) carries trnc.defer_anchor with the ids it
// anchors. The data gradient and the sums carry no defer_until. (A weight
// gradient with no data gradient after it is anchored on the copies into
// the outputs, if any, else on none: it may go to the end.)
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa | FileCheck %s

// CHECK-LABEL: func.func @backward
// The identity the weight gradient's transposes make is cached for every
// later lowering (dx's transposes read it): its fill and select stay
// unmarked, so they do not move with the weight gradient.
// CHECK: nisa.memset
// CHECK-SAME: on gpsimd : <sbuf
// CHECK: nisa.affine_select
// CHECK-SAME: on gpsimd : <sbuf
// CHECK: nisa.matmul {{.*}} transpose {trnc.defer_until = 0 : i64}
// CHECK-NOT: trnc.defer_anchor
// CHECK-COUNT-2: nisa.dma_copy %arg4 {{.*}}trnc.defer_until = 0 : i64
// CHECK-NOT: trnc.defer_until
// CHECK: nisa.matmul {{.*}} transpose :
// CHECK-NOT: trnc.defer_until
// CHECK: trnc.defer_anchor = array<i64: 0>
// CHECK-NOT: trnc.defer_until
// CHECK: return
func.func @backward(%g: tensor<256x128xbf16>, %x: tensor<128x256xbf16>, %dy: tensor<128x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<128xbf16>) {
  %dw = trn.matmul %g, %x : (tensor<256x128xbf16>, tensor<128x256xbf16>) -> tensor<256x256xbf16>
  %dx = trn.matmul %dy, %w : (tensor<128x256xbf16>, tensor<256x256xbf16>) -> tensor<128x256xbf16>
  %s = trn.reduce_sum %dx dims = [1] : tensor<128x256xbf16> -> tensor<128xbf16>
  return %dw, %s : tensor<256x256xbf16>, tensor<128xbf16>
}

// -----

// A weight gradient returned through views strides cannot express (a
// transpose, then a flattening reshape): the reshape's lowering copies the
// product in HBM, so that copy carries the product's mark and moves with
// it (else it would read the product before it is written); the copy into
// the output, after everything, stays unmarked.
// CHECK-LABEL: func.func @view_copy
// CHECK: nisa.matmul {{.*}}{trnc.defer_until = 0 : i64}
// CHECK: nisa.dma_copy {{.*}} {trnc.defer_until = 0 : i64} : memref<65536xbf16>, memref<65536xbf16>
// CHECK: trnc.defer_anchor = array<i64: 0>
// CHECK: nisa.dma_copy %arg4 {{.*}} : memref<65536xbf16>, memref<65536xbf16>
func.func @view_copy(%g: tensor<256x128xbf16>, %x: tensor<128x256xbf16>, %dy: tensor<128x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<65536xbf16>, tensor<128xbf16>) {
  %dw = trn.matmul %g, %x : (tensor<256x128xbf16>, tensor<128x256xbf16>) -> tensor<256x256xbf16>
  %t = trn.transpose %dw permutation = [1, 0] : tensor<256x256xbf16> -> tensor<256x256xbf16>
  %r = trn.reshape %t : tensor<256x256xbf16> -> tensor<65536xbf16>
  %dx = trn.matmul %dy, %w : (tensor<128x256xbf16>, tensor<256x256xbf16>) -> tensor<128x256xbf16>
  %s = trn.reduce_sum %dx dims = [1] : tensor<128x256xbf16> -> tensor<128xbf16>
  return %r, %s : tensor<65536xbf16>, tensor<128xbf16>
}

// -----

// A bias gradient (the output gradient summed over the rows, returned) is a
// weight gradient too: its instructions are marked like the matmul's
// (id 1), and both are anchored after the data gradient.
// CHECK-LABEL: func.func @bias_gradient
// CHECK: nisa.matmul {{.*}}{trnc.defer_until = 0 : i64}
// CHECK: nisa.memset {{.*}}{trnc.defer_until = 1 : i64}
// CHECK: nisa.matmul {{.*}}{trnc.defer_until = 1 : i64}
// CHECK: nisa.dma_copy %arg5 {{.*}}{trnc.defer_until = 1 : i64}
// CHECK-NOT: trnc.defer_until
// CHECK: trnc.defer_anchor = array<i64: 0, 1>
// CHECK-NOT: trnc.defer_until
// CHECK: return
func.func @bias_gradient(%g: tensor<256x128xbf16>, %x: tensor<128x256xbf16>, %dy: tensor<128x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<256xbf16>, tensor<128xbf16>) {
  %dw = trn.matmul %g, %x : (tensor<256x128xbf16>, tensor<128x256xbf16>) -> tensor<256x256xbf16>
  %db = trn.reduce_sum %dy dims = [0] : tensor<128x256xbf16> -> tensor<256xbf16>
  %dx = trn.matmul %dy, %w : (tensor<128x256xbf16>, tensor<256x256xbf16>) -> tensor<128x256xbf16>
  %s = trn.reduce_sum %dx dims = [1] : tensor<128x256xbf16> -> tensor<128xbf16>
  return %dw, %db, %s : tensor<256x256xbf16>, tensor<256xbf16>, tensor<128xbf16>
}

// -----

// A lone matmul (an inference graph's) has no data gradient to go past:
// nothing is marked.
// CHECK-LABEL: func.func @last
// CHECK-NOT: trnc.defer
// CHECK: return
func.func @last(%a: tensor<128x128xbf16>, %b: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %0 = trn.matmul %a, %b : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}
