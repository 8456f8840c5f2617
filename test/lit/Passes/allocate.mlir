// RUN: trnc-opt %s -split-input-file -verify-diagnostics -trnc-allocate-memory | FileCheck %s

// Tiles get 64-byte aligned addresses by live range; a tile placed after
// another died reuses its bytes only once the rotating search wraps around.
// CHECK-LABEL: func.func @sbuf
func.func @sbuf() {
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 25600, f32>
  // CHECK: nisa.alloc {address = 102400 : i64} : <sbuf, 128, 25600, f32>
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 25600, f32>
  // CHECK: nisa.alloc {address = 204800 : i64} : <sbuf, 128, 100, bf16>
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 25600, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 25600, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 25600, f32>
  %d = nisa.alloc : !nisa.tile<sbuf, 128, 100, bf16>
  nisa.memset %a <0, [25600, 1], [128, 25600]>, 0.0 on vector : !nisa.tile<sbuf, 128, 25600, f32>
  nisa.tensor_copy %b <0, [25600, 1], [128, 25600]>, %a <0, [25600, 1], [128, 25600]> on vector
      : !nisa.tile<sbuf, 128, 25600, f32>, !nisa.tile<sbuf, 128, 25600, f32>
  // %a is dead here: %c takes its bytes (the search from the cursor at
  // 204800 finds no room and wraps to 0).
  nisa.tensor_copy %c <0, [25600, 1], [128, 25600]>, %b <0, [25600, 1], [128, 25600]> on vector
      : !nisa.tile<sbuf, 128, 25600, f32>, !nisa.tile<sbuf, 128, 25600, f32>
  nisa.memset %d <0, [100, 1], [128, 100]>, 1.0 on vector : !nisa.tile<sbuf, 128, 100, bf16>
  nisa.tensor_copy %c <0, [25600, 1], [128, 25600]>, %b <0, [25600, 1], [128, 25600]> on vector
      : !nisa.tile<sbuf, 128, 25600, f32>, !nisa.tile<sbuf, 128, 25600, f32>
  return
}

// -----

// A small tile right after a dead one does not take the just-freed slot
// (double buffering): the cursor moves on.
// CHECK-LABEL: func.func @rotate
func.func @rotate() {
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 512, f32>
  // CHECK: nisa.alloc {address = 2048 : i64} : <sbuf, 128, 512, f32>
  // CHECK: nisa.alloc {address = 4096 : i64} : <sbuf, 128, 512, f32>
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 512, f32>
  nisa.memset %a <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>
  nisa.tensor_copy %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> on scalar
      : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.tensor_copy %c <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> on scalar
      : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

// PSUM: a tile of <= 2 KiB per partition stays inside one bank, a bigger one
// takes whole banks, and placement rotates through the banks.
// CHECK-LABEL: func.func @psum
func.func @psum() {
  // CHECK: nisa.alloc {address = 0 : i64} : <psum, 128, 512, f32>
  // CHECK: nisa.alloc {address = 2048 : i64} : <psum, 128, 512, f32>
  // CHECK: nisa.alloc {address = 4096 : i64} : <psum, 128, 256, f32>
  // CHECK: nisa.alloc {address = 6144 : i64} : <psum, 128, 384, f32>
  // CHECK: nisa.alloc {address = 8192 : i64} : <psum, 128, 1024, f32>
  %p0 = nisa.alloc : !nisa.tile<psum, 128, 512, f32>
  %p1 = nisa.alloc : !nisa.tile<psum, 128, 512, f32>
  %p2 = nisa.alloc : !nisa.tile<psum, 128, 256, f32>
  %p4 = nisa.alloc : !nisa.tile<psum, 128, 384, f32>
  %p3 = nisa.alloc : !nisa.tile<psum, 128, 1024, f32>
  nisa.memset %p0 <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<psum, 128, 512, f32>
  nisa.memset %p1 <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<psum, 128, 512, f32>
  // %p0 is dead: %p2 still goes to the next bank, not back to bank 0.
  nisa.tensor_copy %p2 <0, [256, 1], [128, 256]>, %p1 <0, [512, 1], [128, 256]> on vector
      : !nisa.tile<psum, 128, 256, f32>, !nisa.tile<psum, 128, 512, f32>
  // 1536 bytes after %p2 (ends at 5120) would cross into bank 3.
  nisa.memset %p4 <0, [384, 1], [128, 384]>, 0.0 on vector : !nisa.tile<psum, 128, 384, f32>
  nisa.memset %p3 <0, [1024, 1], [128, 1024]>, 0.0 on vector : !nisa.tile<psum, 128, 1024, f32>
  nisa.tensor_copy %p4 <0, [384, 1], [128, 256]>, %p2 <0, [256, 1], [128, 256]> on vector
      : !nisa.tile<psum, 128, 384, f32>, !nisa.tile<psum, 128, 256, f32>
  return
}

// -----

func.func @overflow() {
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 40000, f32>
  // expected-error @+2 {{'nisa.alloc' op does not fit in SBUF: needs 80000 bytes per partition at instruction 1, 229376 bytes per partition in total}}
  // expected-note @+1 {{memory map of SBUF (160000 of 229376 bytes per partition live):}}
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 20000, f32>
  nisa.memset %a <0, [40000, 1], [128, 40000]>, 0.0 on vector : !nisa.tile<sbuf, 128, 40000, f32>
  nisa.tensor_copy %b <0, [20000, 1], [128, 20000]>, %a <0, [40000, 1], [128, 20000]> on vector
      : !nisa.tile<sbuf, 128, 20000, f32>, !nisa.tile<sbuf, 128, 40000, f32>
  return
}

// -----

// When the rotating first fit leaves no gap for a tile, placement starts over
// with best fit: %c takes the exact gap %a left at 0 instead of the cursor's
// 98304, so the 128 KiB %d finds room above %b (first fit: 32 KiB + 96 KiB
// free, no 128 KiB gap).
// CHECK-LABEL: func.func @best_fit
func.func @best_fit() {
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 8192, f32>
  // CHECK: nisa.alloc {address = 32768 : i64} : <sbuf, 128, 16384, f32>
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 8192, f32>
  // CHECK: nisa.alloc {address = 98304 : i64} : <sbuf, 128, 32768, f32>
  %a = nisa.alloc : !nisa.tile<sbuf, 128, 8192, f32>
  %b = nisa.alloc : !nisa.tile<sbuf, 128, 16384, f32>
  %c = nisa.alloc : !nisa.tile<sbuf, 128, 8192, f32>
  %d = nisa.alloc : !nisa.tile<sbuf, 128, 32768, f32>
  nisa.memset %a <0, [8192, 1], [128, 8192]>, 0.0 on vector : !nisa.tile<sbuf, 128, 8192, f32>
  nisa.tensor_copy %b <0, [16384, 1], [128, 8192]>, %a <0, [8192, 1], [128, 8192]> on vector
      : !nisa.tile<sbuf, 128, 16384, f32>, !nisa.tile<sbuf, 128, 8192, f32>
  nisa.memset %c <0, [8192, 1], [128, 8192]>, 1.0 on vector : !nisa.tile<sbuf, 128, 8192, f32>
  nisa.memset %d <0, [32768, 1], [128, 32768]>, 2.0 on vector : !nisa.tile<sbuf, 128, 32768, f32>
  nisa.tensor_copy %c <0, [8192, 1], [128, 8192]>, %b <0, [16384, 1], [128, 8192]> on vector
      : !nisa.tile<sbuf, 128, 8192, f32>, !nisa.tile<sbuf, 128, 16384, f32>
  nisa.memset %d <0, [32768, 1], [128, 32768]>, 3.0 on vector : !nisa.tile<sbuf, 128, 32768, f32>
  return
}

// -----

// Addresses the list scheduler chose (every used tile has one) are checked
// and kept, even where the allocator's own search would pick others (%c
// would take 0 here); an unused tile gets 0.
// CHECK-LABEL: func.func @preplaced
func.func @preplaced() {
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 512, f32>
  // CHECK: nisa.alloc {address = 8192 : i64} : <sbuf, 128, 512, f32>
  // CHECK: nisa.alloc {address = 2048 : i64} : <sbuf, 128, 512, f32>
  // CHECK: nisa.alloc {address = 0 : i64} : <sbuf, 128, 64, f32>
  %a = nisa.alloc {address = 0 : i64} : !nisa.tile<sbuf, 128, 512, f32>
  %b = nisa.alloc {address = 8192 : i64} : !nisa.tile<sbuf, 128, 512, f32>
  %c = nisa.alloc {address = 2048 : i64} : !nisa.tile<sbuf, 128, 512, f32>
  %unused = nisa.alloc : !nisa.tile<sbuf, 128, 64, f32>
  nisa.memset %a <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>
  nisa.tensor_copy %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> on scalar
      : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  nisa.tensor_copy %c <0, [512, 1], [128, 512]>, %b <0, [512, 1], [128, 512]> on scalar
      : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

// Two tiles live at once on overlapping bytes: a planted or corrupted
// placement is an error naming both, not a silent race.
func.func @preplaced_overlap() {
  // expected-note @+1 {{the other tile}}
  %a = nisa.alloc {address = 0 : i64} : !nisa.tile<sbuf, 128, 512, f32>
  // expected-error @+1 {{'nisa.alloc' op address 1024 is invalid: it overlaps the tile at address 0 (live 0..1) while both are live (1..1)}}
  %b = nisa.alloc {address = 1024 : i64} : !nisa.tile<sbuf, 128, 512, f32>
  nisa.memset %a <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>
  nisa.tensor_copy %b <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> on scalar
      : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
  return
}

// -----

// A PSUM tile of one bank's size or less may not cross a bank boundary.
func.func @preplaced_bank() {
  // expected-error @+1 {{'nisa.alloc' op address 1024 is invalid: the tile (2048 bytes per partition) leaves PSUM or crosses a PSUM bank}}
  %p = nisa.alloc {address = 1024 : i64} : !nisa.tile<psum, 128, 512, f32>
  nisa.memset %p <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<psum, 128, 512, f32>
  return
}
