// Loads far ahead of the frontier fill only half the prefetch budget. On
// the rows of an AdamW step (48 row tiles; four loads, 14 instructions and
// three stores each; 44 KiB per partition made live per row in program
// order) the loads used to run 19 rows ahead of the first store and 14
// ahead of each later one: their tiles held the budget, the next rows'
// compute could not get tiles and ran one dependent instruction at a time
// at the frontier (estimate 373 us). Now loads lead the stores by 10-11
// rows and the rows in between overlap (274 us).
// RUN: %python %S/Inputs/far_prefetch.py | trnc-opt -trnc-pipeline-list-schedule | FileCheck %s

// CHECK-LABEL: func.func @adamw_rows
// Row 15's parameter load (%arg0 at 15 x 131072) after the first store.
// CHECK-NOT: %arg0 <1966080,
// CHECK: nisa.dma_copy %arg4 <0,
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, {{.*}}, %arg0 <1966080,
// Row 32's parameter load after row 20's parameter store.
// CHECK-NOT: %arg0 <4194304,
// CHECK: nisa.dma_copy %arg6 <2621440,
// CHECK: nisa.dma_copy %{{[0-9]+}} <0, {{.*}}, %arg0 <4194304,
