// Long-lived SBUF tiles are placed from the top of SBUF down (TilePlacement):
// 40 small tiles live over > 1024 instructions sit together at the top, so
// the 200 KiB tile at the end still finds a gap; placed by the rotating
// cursor between the short-lived 64 KiB tiles they would be scattered over
// the partition (efficientnet_b0's training forward: 13.8 of 224 KiB live
// and no 8 KiB gap).
// RUN: %python %S/Inputs/long_lived_tiles.py | trnc-opt -trnc-allocate-memory | FileCheck %s

// CHECK-LABEL: func.func @long_lived
// CHECK: nisa.alloc {address = 229312 : i64} : <sbuf, 128, 16, f32>
// CHECK: nisa.alloc {address = 229248 : i64} : <sbuf, 128, 16, f32>
// CHECK-COUNT-37: nisa.alloc {address = 22{{[6-9][0-9][0-9][0-9]}} : i64} : <sbuf, 128, 16, f32>
// CHECK: nisa.alloc {address = 226816 : i64} : <sbuf, 128, 16, f32>
// CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 51200, f32>
