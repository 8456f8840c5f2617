// RUN: trnc-opt %s -split-input-file -verify-diagnostics
// Every verifier rule of the nisa dialect, one case each.

// expected-error @+1 {{tile partitions must be in 1..128, got 129}}
func.func private @tile_partitions(!nisa.tile<sbuf, 129, 8, f32>)

// -----

// expected-error @+1 {{PSUM tile needs 32768 bytes per partition, more than 16384}}
func.func private @psum_size(!nisa.tile<psum, 128, 8192, f32>)

// -----

func.func @ap_rank(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{access pattern must have 1 to 5 dims, got 6}}
  nisa.memset %t <0, [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]>, 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @ap_partition_stride(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{dst outer dim must walk partitions (stride 8), got stride 16}}
  nisa.memset %t <0, [16, 1], [64, 8]>, 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @ap_free_extent(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{dst free pattern reaches element 8 of a partition of 8}}
  nisa.memset %t <1, [8, 1], [128, 8]>, 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @start_partition(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{dst of 48 partitions cannot start at partition 32}}
  nisa.memset %t <256, [8, 1], [48, 8]>, 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @hbm_extent(%m: memref<100xf32>, %t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{source pattern reaches element 1023 of an HBM buffer of 100}}
  nisa.dma_copy %t <0, [8, 1], [128, 8]>, %m <0, [8, 1], [128, 8]> : !nisa.tile<sbuf, 128, 8, f32>, memref<100xf32>
  return
}

// -----

func.func @dma_count(%m: memref<1024xf32>, %t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{dst has 1024 elements but source has 512}}
  nisa.dma_copy %t <0, [8, 1], [128, 8]>, %m <0, [4, 1], [128, 4]> : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  return
}

// -----

func.func @matmul_psum(%p: !nisa.tile<sbuf, 128, 512, f32>, %a: !nisa.tile<sbuf, 128, 128, f32>) {
  // expected-error @+1 {{dst must be an f32 PSUM tile}}
  nisa.matmul %p <0, [512, 1], [128, 128]>, %a <0, [128, 1], [128, 128]>, %a <0, [128, 1], [128, 128]> : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 128, f32>
  return
}

// -----

func.func @matmul_n(%p: !nisa.tile<psum, 128, 1024, f32>, %a: !nisa.tile<sbuf, 128, 128, f32>, %b: !nisa.tile<sbuf, 128, 1024, f32>) {
  // expected-error @+1 {{moving free size 1024 exceeds 512}}
  nisa.matmul %p <0, [1024, 1], [128, 1024]>, %a <0, [128, 1], [128, 128]>, %b <0, [1024, 1], [128, 1024]> : !nisa.tile<psum, 128, 1024, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 1024, f32>
  return
}

// -----

func.func @matmul_k(%p: !nisa.tile<psum, 128, 512, f32>, %a: !nisa.tile<sbuf, 128, 128, f32>, %b: !nisa.tile<sbuf, 128, 512, f32>) {
  // expected-error @+1 {{contraction differs: stationary has K = 128, moving has K = 64}}
  nisa.matmul %p <0, [512, 1], [128, 512]>, %a <0, [128, 1], [128, 128]>, %b <0, [512, 1], [64, 512]> : !nisa.tile<psum, 128, 512, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

func.func @matmul_dst_shape(%p: !nisa.tile<psum, 128, 512, f32>, %a: !nisa.tile<sbuf, 128, 128, f32>, %b: !nisa.tile<sbuf, 128, 512, f32>) {
  // expected-error @+1 {{dst must be [64 partitions, 512 elements], got [128, 512]}}
  nisa.matmul %p <0, [512, 1], [128, 512]>, %a <0, [128, 1], [128, 64]>, %b <0, [512, 1], [128, 512]> : !nisa.tile<psum, 128, 512, f32>, !nisa.tile<sbuf, 128, 128, f32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

func.func @tt_engine(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{cannot run on the scalar engine}}
  nisa.tensor_tensor add %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> on scalar : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @tt_psum(%t: !nisa.tile<sbuf, 128, 8, f32>, %p: !nisa.tile<psum, 128, 8, f32>) {
  // expected-error @+1 {{both inputs in PSUM}}
  nisa.tensor_tensor add %t <0, [8, 1], [128, 8]>, %p <0, [8, 1], [128, 8]>, %p <0, [8, 1], [128, 8]> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<psum, 128, 8, f32>, !nisa.tile<psum, 128, 8, f32>
  return
}

// -----

func.func @shape_mismatch(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{operands differ in shape: 128x8 vs 64x8}}
  nisa.tensor_copy %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [64, 8]> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @reduce_shape(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{dst must keep the partitions and outer free dims of the source}}
  nisa.tensor_reduce add %t <0, [8, 1], [128, 2]>, %t <0, [8, 1], [128, 8]> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @act_bias(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{bias operand must be [128, 1]}}
  nisa.activation exp %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> bias %t <0, [8, 1], [128, 2]> : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @tensor_scalar_per_partition(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{per-partition operand must be [128, 1]}}
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> subtract 0.0 per_partition %t <0, [8, 1], [128, 8]>, bypass 0.0 on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @tensor_scalar_per_partition_operand1(%t: !nisa.tile<sbuf, 128, 8, f32>, %b: !nisa.tile<sbuf, 64, 1, f32>) {
  // expected-error @+1 {{per-partition operand1 must be [128, 1]}}
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 2.0, add 0.0 per_partition %b <0, [1, 1], [64, 1]> : !nisa.tile<sbuf, 64, 1, f32> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @tensor_scalar_operand1_bypass(%t: !nisa.tile<sbuf, 128, 8, f32>, %b: !nisa.tile<sbuf, 128, 1, f32>) {
  // expected-error @+1 {{per-partition operand1 with op1 bypass}}
  nisa.tensor_scalar %t <0, [8, 1], [128, 8]>, %t <0, [8, 1], [128, 8]> multiply 2.0, bypass 0.0 per_partition %b <0, [1, 1], [128, 1]> : !nisa.tile<sbuf, 128, 1, f32> on vector : !nisa.tile<sbuf, 128, 8, f32>, !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @semaphore(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{semaphore id 40 out of range 0..31}}
  nisa.memset %t <0, [8, 1], [128, 8]>, 0.0 on vector {waits = array<i64: 40, 1>} : !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @signal(%t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{signal semaphore id 32 out of range 0..31}}
  nisa.memset %t <0, [8, 1], [128, 8]>, 0.0 on vector {signal = 32} : !nisa.tile<sbuf, 128, 8, f32>
  return
}

// -----

func.func @dma_queue(%m: memref<1024xf32>, %t: !nisa.tile<sbuf, 128, 8, f32>) {
  // expected-error @+1 {{DMA queue must be in 0..15}}
  nisa.dma_copy %t <0, [8, 1], [128, 8]>, %m <0, [8, 1], [128, 8]> {queue = 16} : !nisa.tile<sbuf, 128, 8, f32>, memref<1024xf32>
  return
}

// -----

func.func @alloc_address() {
  // expected-error @+1 {{address 16000 + 2048 bytes exceeds the partition}}
  %p = nisa.alloc {address = 16000} : !nisa.tile<psum, 128, 512, f32>
  return
}

// -----

func.func @nop_signal() {
  // expected-error @+1 {{a wait-only nop does not signal}}
  nisa.nop on vector {signal = 1}
  return
}

// -----

// The module's target sets the partition size: 200 KiB of SBUF fits a trn2
// partition (224 KiB) but not a trn1 one (192 KiB).
module attributes {nisa.target = "trn1"} {
  func.func @sbuf_size_on_trn1() {
    // expected-error @+1 {{tile needs 204800 bytes per partition, more than SBUF's 196608 on trn1}}
    %t = nisa.alloc : !nisa.tile<sbuf, 128, 51200, f32>
    return
  }
}

// -----

// Without a nisa.target the default target's (trn2) limit applies.
func.func @sbuf_size_default() {
  // expected-error @+1 {{tile needs 262144 bytes per partition, more than SBUF's 229376 on trn2}}
  %t = nisa.alloc : !nisa.tile<sbuf, 128, 65536, f32>
  return
}

// -----

// expected-error @+1 {{'nisa.target' must name a target (trn2, trn1, trn3), got "trn9"}}
module attributes {nisa.target = "trn9"} {
}

// -----

// expected-error @+1 {{'nisa.target' belongs on a module}}
func.func @target_on_func() attributes {nisa.target = "trn2"} {
  return
}

// -----

func.func @peer_signal_semaphore() {
  // expected-error @+1 {{semaphore 5 is not a barrier semaphore (21..31)}}
  nisa.peer_signal {semaphore = 5 : i64}
  return
}

// -----

func.func @peer_signal_other_signal() {
  // expected-error @+1 {{signals semaphore 22, not its barrier semaphore 21}}
  nisa.peer_signal {semaphore = 21 : i64, signal = 22 : i64}
  return
}

// -----

func.func @peer_wait_count() {
  // expected-error @+1 {{count must be at least 1, got 0}}
  nisa.peer_wait {count = 0 : i64, semaphore = 21 : i64}
  return
}

// -----

func.func @dram_alloc_offset_unaligned() {
  // expected-error @+1 {{offset 96 is not a non-negative multiple of 64 bytes}}
  %s = nisa.dram_alloc {offset = 96 : i64} : memref<16xf32>
  return
}

// -----

func.func @dram_alloc_offset_negative() {
  // expected-error @+1 {{offset -64 is not a non-negative multiple of 64 bytes}}
  %s = nisa.dram_alloc {offset = -64 : i64} : memref<16xf32>
  return
}

// -----

func.func @hbm_window_still(%b: memref<1024xf32>, %i: index) {
  // expected-error @+1 {{step must be non-zero}}
  %w = nisa.hbm_window %b[%i * 0] : memref<1024xf32>
  return
}

// -----

func.func @hbm_window_period_one(%b: memref<1024xf32>, %i: index) {
  // expected-error @+1 {{period must be at least 2}}
  %w = nisa.hbm_window %b[%i * 128 period 1] : memref<1024xf32>
  return
}

// -----

func.func @hbm_window_phase_without_period(%b: memref<1024xf32>, %i: index) {
  // expected-error @+1 {{phase needs a period}}
  %w = nisa.hbm_window %b[%i * 128 phase 1] : memref<1024xf32>
  return
}
