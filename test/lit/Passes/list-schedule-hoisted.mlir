// A tile the list scheduler hoists far ahead of its use lives long in the
// new order, so it is placed from the top of SBUF down (as the allocator
// places long-lived tiles), not by the cursor among the working tiles: the
// 40 small loads go into the DMA stream's idle time at the start of a chain
// of 350 row tiles of 64 KiB and sit together at the top. (Scattered over
// the partition, such tiles left the bf16 GPT step's backward without a
// 32 KiB gap.)
// RUN: %python %S/Inputs/hoisted_small_tiles.py | trnc-opt -trnc-pipeline-list-schedule | FileCheck %s

// CHECK-LABEL: func.func @hoisted
// CHECK: nisa.alloc {address = 229312 : i64} : <sbuf, 128, 16, f32>
// CHECK-NEXT: nisa.alloc {address = 229248 : i64} : <sbuf, 128, 16, f32>
// CHECK-COUNT-37: nisa.alloc {address = 22{{[6-9][0-9][0-9][0-9]}} : i64} : <sbuf, 128, 16, f32>
// CHECK-NEXT: nisa.alloc {address = 226816 : i64} : <sbuf, 128, 16, f32>
// CHECK: nisa.dma_copy %{{.*}} <0, [16, 1], [128, 16]>, %arg1
// CHECK: nisa.activation exp
