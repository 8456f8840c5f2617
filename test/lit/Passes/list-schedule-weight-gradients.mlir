// The list scheduler's weight-gradient trial (DeferredProducts.h): with the
// instructions the lowering marked moved before their anchor, the program
// is scheduled again at the best index-priority depth and kept only if
// estimated faster; the marks are dropped either way. A function without
// weight gradients has no such trial.
// RUN: trnc-opt %s -split-input-file --pass-pipeline="builtin.module(trnc-compile{compile-to=unroll},func.func(trnc-pipeline-list-schedule{report=true}))" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: trnc-opt %s -split-input-file --pass-pipeline="builtin.module(trnc-compile{compile-to=unroll},func.func(trnc-pipeline-list-schedule))" | FileCheck %s

// REPORT: remark: list schedule: program order {{[0-9]+}} ns; {{.*}}; weight gradients moved, budget {{[0-9.]+}}: {{[0-9]+}} ns; kept {{[0-9]+}} ns
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

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<512x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<512xbf16> {
  %y = trn.matmul %x, %w : (tensor<512x256xbf16>, tensor<256x256xbf16>) -> tensor<512x256xbf16>
  %s = trn.reduce_sum %y dims = [1] : tensor<512x256xbf16> -> tensor<512xbf16>
  return %s : tensor<512xbf16>
}
