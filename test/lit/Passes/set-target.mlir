// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-set-target{target=trn3},func.func(trnc-allocate-memory))' | FileCheck %s
// RUN: not trnc-opt %s --pass-pipeline='builtin.module(trnc-set-target{target=trn1},func.func(trnc-allocate-memory))' 2>&1 | FileCheck %s --check-prefix=TRN1

// The target is one module attribute, and what follows reads it: a 200 KiB
// tile is placed on trn3 (256 KiB partitions) and refused on trn1 (192 KiB),
// with no pass option.
// CHECK: module attributes {nisa.target = "trn3"}
// CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 51200, f32>
// TRN1: error: 'nisa.alloc' op tile needs 204800 bytes per partition, more than SBUF's 196608 on trn1
func.func @big() {
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 51200, f32>
  nisa.memset %t <0, [51200, 1], [128, 51200]>, 0.0 on vector : !nisa.tile<sbuf, 128, 51200, f32>
  return
}
