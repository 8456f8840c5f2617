// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @strided(%in: memref<64xf32>, %out: memref<64xf32>) {
  // expected-error @+1 {{dst and src0 must each be one contiguous HBM run}}
  nisa.collective %out <0, [32, 1], [1, 32]>, %in <0, [32, 2], [1, 32]> all_reduce sum group 2 id 0 span chip : memref<64xf32>, memref<64xf32>
  return
}

// -----

func.func @sizes(%in: memref<64xf32>, %out: memref<64xf32>) {
  // expected-error @+1 {{dst has 32 elements and src0 32, which all_gather over 2 ranks does not give}}
  nisa.collective %out <0, [32, 1], [1, 32]>, %in <0, [32, 1], [1, 32]> all_gather none group 2 id 0 span chip : memref<64xf32>, memref<64xf32>
  return
}

// -----

func.func @reduce(%in: memref<64xf32>, %out: memref<64xf32>) {
  // expected-error @+1 {{needs a reduce op}}
  nisa.collective %out <0, [32, 1], [1, 32]>, %in <0, [32, 1], [1, 32]> all_reduce none group 2 id 0 span chip : memref<64xf32>, memref<64xf32>
  return
}

// -----

func.func @queue(%in: memref<64xf32>, %out: memref<64xf32>) {
  // expected-error @+1 {{collectives run on DMA queue 15}}
  nisa.collective %out <0, [32, 1], [1, 32]>, %in <0, [32, 1], [1, 32]> all_reduce sum group 2 id 0 span chip {queue = 3 : i64} : memref<64xf32>, memref<64xf32>
  return
}
