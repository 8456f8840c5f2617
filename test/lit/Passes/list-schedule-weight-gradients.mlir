// The list scheduler's weight-gradient trial (DeferredProducts.h): with the
// instructions the lowering marked moved before their anchor, the program
// is scheduled again at the best index-priority depth and kept only if
// estimated faster; the marks are dropped either way. A weight gradient
// with no data gradient after it has no anchor: its instructions are spread
// evenly over the instructions from its first to the end (second case). A
// function without weight gradients has no such trial.
// RUN: trnc-opt %s -split-input-file --pass-pipeline="builtin.module(trnc-compile{compile-to=unroll},func.func(trnc-pipeline-list-schedule{report=true}))" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: trnc-opt %s -split-input-file --pass-pipeline="builtin.module(trnc-compile{compile-to=unroll},func.func(trnc-pipeline-list-schedule))" | FileCheck %s

// REPORT: remark: list schedule: program order {{[0-9]+}} ns; {{.*}}; weight gradients moved ({{[1-9][0-9]*}} instructions to their anchors, 0 spread over the last 0), budget {{[0-9.]+}}: {{[0-9]+}} ns; kept {{[0-9]+}} ns
// REPORT: remark: list schedule: {{.*}}; weight gradients moved (0 instructions to their anchors, {{[1-9][0-9]*}} spread over the last {{[1-9][0-9]*}}), budget
// REPORT: remark: list schedule: {{.*}}; weight gradients moved (0 instructions to their anchors, 10 spread over the last 6), budget
// REPORT: remark: list schedule: program order {{[0-9]+}} ns; index priority
// REPORT-NOT: weight gradients moved
// REPORT-SAME: kept

// CHECK-LABEL: func.func @backward
// CHECK-NOT: trnc.defer
// CHECK: return
func.func @backward(%dy: tensor<512x256xbf16>, %x: tensor<512x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<512xbf16>) {
  %dyt = trn.transpose %dy permutation = [1, 0] : tensor<512x256xbf16> -> tensor<256x512xbf16>
  %dw = trn.matmul %dyt, %x : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xbf16>
  %dx = trn.matmul %dy, %w : (tensor<512x256xbf16>, tensor<256x256xbf16>) -> tensor<512x256xbf16>
  %s = trn.reduce_sum %dx dims = [1] : tensor<512x256xbf16> -> tensor<512xbf16>
  return %dw, %s : tensor<256x256xbf16>, tensor<512xbf16>
}

// -----

// The first layer's weight gradient, after the last data gradient: spread
// over the row sums' instructions after it.
// CHECK-LABEL: func.func @first_layer
// CHECK-NOT: trnc.defer
// CHECK: return
func.func @first_layer(%dy: tensor<512x256xbf16>, %x: tensor<512x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<512xbf16>) {
  %dx = trn.matmul %dy, %w : (tensor<512x256xbf16>, tensor<256x256xbf16>) -> tensor<512x256xbf16>
  %dyt = trn.transpose %dy permutation = [1, 0] : tensor<512x256xbf16> -> tensor<256x512xbf16>
  %dw = trn.matmul %dyt, %x : (tensor<256x512xbf16>, tensor<512x256xbf16>) -> tensor<256x256xbf16>
  %s = trn.reduce_sum %dx dims = [1] : tensor<512x256xbf16> -> tensor<512xbf16>
  return %dw, %s : tensor<256x256xbf16>, tensor<512xbf16>
}

// -----

// Two weight gradients after the last data gradient, with the gradient of
// the ReLU between them (unmarked: not a weight gradient's) that the second
// reads through scratch: spread, an instruction never goes before one it
// came after, so the ReLU's store into scratch still precedes the second
// weight gradient's load of it.
// CHECK-LABEL: func.func @mlp
// CHECK: nisa.copy_predicated %[[R:[0-9]+]]
// CHECK: nisa.dma_copy %[[S:[0-9]+]] <{{.*}}>, %[[R]] <
// CHECK: nisa.dma_copy %{{[0-9]+}} <{{.*}}>, %[[S]] <
func.func @mlp(%x: tensor<32x64xf32>, %h: tensor<32x128xf32>, %mask: tensor<32x128xf32>, %w2t: tensor<128x10xf32>, %dy: tensor<32x10xf32>) -> (tensor<128x64xf32>, tensor<10x128xf32>) {
  %w2 = trn.transpose %w2t permutation = [1, 0] : tensor<128x10xf32> -> tensor<10x128xf32>
  %dh = trn.matmul %dy, %w2 : (tensor<32x10xf32>, tensor<10x128xf32>) -> tensor<32x128xf32>
  %dyt = trn.transpose %dy permutation = [1, 0] : tensor<32x10xf32> -> tensor<10x32xf32>
  %dw2 = trn.matmul %dyt, %h : (tensor<10x32xf32>, tensor<32x128xf32>) -> tensor<10x128xf32>
  %dr = trn.threshold_backward %dh, %mask, 0.0 : tensor<32x128xf32>
  %drt = trn.transpose %dr permutation = [1, 0] : tensor<32x128xf32> -> tensor<128x32xf32>
  %dw1 = trn.matmul %drt, %x : (tensor<128x32xf32>, tensor<32x64xf32>) -> tensor<128x64xf32>
  return %dw1, %dw2 : tensor<128x64xf32>, tensor<10x128xf32>
}

// -----

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<512x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<512xbf16> {
  %y = trn.matmul %x, %w : (tensor<512x256xbf16>, tensor<256x256xbf16>) -> tensor<512x256xbf16>
  %s = trn.reduce_sum %y dims = [1] : tensor<512x256xbf16> -> tensor<512xbf16>
  return %s : tensor<512xbf16>
}
