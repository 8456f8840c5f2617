// RUN: trnc-opt %s | trnc-opt | FileCheck %s
// Round trip of every nisa op, type and attribute.

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: memref<1024xf32>
func.func @kernel(%in: memref<1024xf32> {nisa.input = 0 : i64}, %out: memref<1024xbf16> {nisa.output = 0 : i64}) {
  // CHECK: nisa.alloc : <sbuf, 128, 8, f32>
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.alloc {address = 64 : i64} : <sbuf, 128, 8, bf16>
  %u = nisa.alloc {address = 64} : !nisa.tile<sbuf, 128, 8, bf16>
  // CHECK: nisa.alloc : <psum, 128, 512, f32>
  %p = nisa.alloc : !nisa.tile<psum, 128, 512, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 1, f32>
  // CHECK: nisa.dram_alloc : memref<64xf32>
  %s = nisa.dram_alloc : memref<64xf32>
  %c2 = arith.constant 2 : index
  // CHECK: nisa.hbm_window %{{.*}}[%{{.*}} * 128] : memref<1024xf32>
  %w = nisa.hbm_window %in[%c2 * 128] : memref<1024xf32>
  // CHECK: nisa.hbm_window %{{.*}}[%{{.*}} * 128 period 4 phase 1] : memref<1024xf32>
  %wp = nisa.hbm_window %in[%c2 * 128 period 4 phase 1] : memref<1024xf32>
  // CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [16, 8]>, %{{.*}} <0, [8, 1], [16, 8]> : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  nisa.dma_copy %t <0, [8, 1], [16, 8]>, %w <0, [8, 1], [16, 8]> : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  // CHECK: nisa.dma_copy %{{.*}} <0, [8, 1], [128, 8]>, %{{.*}} <0, [8, 1], [128, 8]> : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  nisa.dma_copy %t <0, [8, 1], [128, 8]>, %in <0, [8, 1], [128, 8]> : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  // CHECK: nisa.activation relu {{.*}} bias %{{.*}} <0, [1, 1], [128, 1]> {signal = 2 : i64, waits = array<i64: 4, 1>}
  nisa.activation relu %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> bias %b <0, [1, 1], [128, 1]> {waits = array<i64: 4, 1>, signal = 2} : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  // CHECK: nisa.tensor_scalar {{.*}} multiply 2.000000e+00, add 1.000000e+00 on vector {reverse0}
  nisa.tensor_scalar %u <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 2.0, add 1.0 on vector {reverse0} : !nisa.tile<sbuf, 128, 8, bf16>, !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.tensor_scalar {{.*}} subtract 0.000000e+00 per_partition %{{.*}} <0, [1, 1], [128, 1]>, bypass 0.000000e+00 on scalar : {{.*}}, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> subtract 0.0 per_partition %b <0, [1, 1], [128, 1]>, bypass 0.0 on scalar : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  // Both operands per partition (src1 for op0, src2 for op1, typed inline).
  // CHECK: nisa.tensor_scalar {{.*}} subtract 0.000000e+00 per_partition %[[B:.*]] <0, [1, 1], [128, 1]>, multiply 0.000000e+00 per_partition %[[B]] <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32> on vector : {{.*}}, !nisa.tile<sbuf, 128, 1, f32>
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> subtract 0.0 per_partition %b <0, [1, 1], [128, 1]>, multiply 0.0 per_partition %b <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 1, f32>
  // Only op1's operand per partition.
  // CHECK: nisa.tensor_scalar {{.*}} multiply 1.024000e+03, subtract 0.000000e+00 per_partition %{{.*}} : !nisa.tile<sbuf, 128, 1, f32> on vector : <sbuf, 128, 8, f32>, <sbuf, 128, 8, f32>{{$}}
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 1024.0, subtract 0.0 per_partition %b <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.tensor_tensor add {{.*}}, %{{.*}} <0, [8, 0], [128, 8]> on gpsimd
  nisa.tensor_tensor add %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]>, %t <0, [8, 0], [128, 8]> on gpsimd : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.matmul {{.*}} accumulate :
  nisa.matmul %p <0, [512, 1], [8, 8]>, %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> accumulate : !nisa.tile<psum, 128, 512, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.tensor_reduce max {{.*}} on vector
  nisa.tensor_reduce max %b <0, [1, 1], [128, 1]>, %t <0, [8, 1], [128, 8]> on vector : !nisa.tile<sbuf, 128, 1, f32>, !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.tensor_copy {{.*}} on scalar
  nisa.tensor_copy %t <0, [8, 1], [8, 8]>, %p <0, [512, 1], [8, 8]> on scalar : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<psum, 128, 512, f32>
  // CHECK: nisa.memset {{.*}}, 0.000000e+00 on gpsimd
  nisa.memset %t <0, [8, 1], [128, 8]>, 0.0 on gpsimd : !nisa.tile<sbuf, 128, 8, f32>
  // CHECK: nisa.nop on dma {waits = array<i64: 5, 1, 2, 3>}
  nisa.nop on dma {waits = array<i64: 5, 1, 2, 3>}
  // CHECK: nisa.nop on gpsimd{{$}}
  nisa.nop on gpsimd
  // CHECK: nisa.dma_copy {{.*}} {queue = 3 : i64} : memref<1024xbf16>, !nisa.tile<sbuf, 128, 8, bf16>
  nisa.dma_copy %out <0, [8, 1], [128, 8]>, %u <0, [8, 1], [128, 8]> {queue = 3} : memref<1024xbf16>, !nisa.tile<sbuf, 128, 8, bf16>
  return
}
