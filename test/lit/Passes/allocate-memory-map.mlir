// RUN: not trnc-opt %s --pass-pipeline='builtin.module(func.func(trnc-allocate-memory{target=trn1}))' 2>&1 | FileCheck %s

// The overflow note lists every live buffer: address range, size, type,
// live range and the op that allocated it.
// CHECK: error: 'nisa.alloc' op does not fit in SBUF: needs 65600 bytes per partition at instruction 2, 196608 bytes per partition in total
// CHECK: note: memory map of SBUF (131072 of 196608 bytes per partition live):
// CHECK-NEXT: [0, 65536) 65536 B  !nisa.tile<sbuf, 128, 16384, f32> live 0..2 at {{.*}}allocate-memory-map.mlir:10:8
// CHECK-NEXT: [65536, 131072) 65536 B  !nisa.tile<sbuf, 128, 32768, bf16> live 1..2 at {{.*}}allocate-memory-map.mlir:11:8
func.func @map() {
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 16384, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 32768, bf16>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 16400, f32>
  %d = nisa.alloc : !nisa.tile<sbuf, 128, 16384, f32>
  nisa.memset %a <0, [16384, 1], [128, 16384]>, 0.0 on vector : !nisa.tile<sbuf, 128, 16384, f32>
  nisa.memset %b <0, [32768, 1], [128, 32768]>, 0.0 on vector : !nisa.tile<sbuf, 128, 32768, bf16>
  nisa.tensor_tensor add %c <0, [16400, 1], [128, 16384]>, %a <0, [16384, 1], [128, 16384]>,
      %b <0, [32768, 1], [128, 16384]> on vector
      : !nisa.tile<sbuf, 128, 16400, f32>, !nisa.tile<sbuf, 128, 16384, f32>, !nisa.tile<sbuf, 128, 32768, bf16>
  nisa.memset %d <0, [16384, 1], [128, 16384]>, 0.0 on vector : !nisa.tile<sbuf, 128, 16384, f32>
  return
}
