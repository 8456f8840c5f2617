//===- Program.h - A compiled program: streams, regions, metadata -*- C++ -*-===//
//
// The in-memory form of a trnc artifact: what the compiler's emitter builds
// and what the loader hands to the simulator. The on-disk form (magic,
// version, sections, checksums) is in Artifact.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trnc {

/// One HBM region a program addresses. Inputs and outputs are bound by the
/// caller to its own buffers (zero copy); scratch is allocated by the runtime;
/// constants carry their bytes in the artifact.
struct Region {
  enum class Kind : uint8_t { Input = 0, Output = 1, Scratch = 2, Constant = 3 };
  Kind kind = Kind::Scratch;
  uint32_t index = 0;      // position among the graph's inputs or outputs
  isa::DType dtype = isa::DType::F32;
  std::vector<int64_t> shape;   // logical shape (inputs/outputs)
  std::vector<int64_t> strides; // in elements (inputs/outputs)
  uint64_t bytes = 0;           // bytes the region spans
  std::vector<uint8_t> data;    // Constant only: exactly `bytes` bytes
  /// Scratch only: the byte offset of the region in the program's scratch
  /// arena (a multiple of isa::kScratchAlignment). The compiler packs
  /// regions by liveness (trnc-pack-scratch), so regions never live at once
  /// share bytes; a region's contents are undefined until written.
  uint64_t arenaOffset = 0;

  /// `strides`, or the contiguous row-major strides of `shape` when the
  /// region records none.
  std::vector<int64_t> layoutStrides() const;
  /// Bytes from the first to one past the last element of the (shape,
  /// layoutStrides(), dtype) layout, at least one element (a zero-element tensor is
  /// bound to a one-element region); nullopt for a negative or mismatched
  /// size or stride, or a span past 2^62 bytes.
  std::optional<uint64_t> layoutBytes() const;
};

/// Where an instruction came from: the FX node and the user's source line.
struct SourceLoc {
  std::string op;   // e.g. "aten.mm.default"
  std::string node; // FX node name
  std::string file;
  uint32_t line = 0;
};

/// An instruction by its place in the streams.
struct InstructionRef {
  isa::Engine engine = isa::Engine::Tensor;
  uint32_t index = 0; // position in that engine's stream
};

/// One SBUF or PSUM tile as the compiler placed it: the bytes it holds in
/// each of its partitions and the instructions that first and last touch it
/// (the allocator's live range). `first`/`last` count instructions in
/// program order (the streams interleaved as emitted); `firstAt`/`lastAt`
/// are the same two instructions in their streams. Tiles that are live at
/// once never share bytes (the verifier checks it). The profiler draws
/// occupancy over simulated time from these (docs/profiling.md).
struct Allocation {
  enum class Space : uint8_t { Sbuf = 0, Psum = 1 };
  Space space = Space::Sbuf;
  uint32_t partitions = 0;       // partitions 0 .. partitions-1
  uint64_t address = 0;          // byte offset inside each partition
  uint64_t bytes = 0;            // bytes per partition
  uint64_t first = 0, last = 0;  // program-order instruction indices, inclusive
  InstructionRef firstAt, lastAt;
  /// The physical core whose SBUF/PSUM holds the tile and whose streams
  /// firstAt/lastAt index (0 at LNC=1). `first`/`last` count that core's
  /// instructions in program order.
  uint8_t core = 0;
};

const char *spaceName(Allocation::Space space); // "SBUF", "PSUM"

/// One physical core's instruction streams, one per engine.
using EngineStreams = std::array<std::vector<isa::Instruction>, isa::kNumEngines>;

/// Largest logical-core degree a program may have (MachineModel::maxLnc of
/// every target is at most this).
constexpr unsigned kMaxLnc = 2;

struct Program {
  std::string target = "trn2";
  std::string name;              // graph name, for messages
  std::string compilerVersion;   // identity of the compiler that built it
  std::vector<Region> regions;
  /// Physical core 0's streams: the whole program at LNC=1.
  EngineStreams streams;
  /// At LNC=2, physical core 1's streams (one entry); empty at LNC=1. Both
  /// cores address the same HBM regions; SBUF/PSUM addresses are per core.
  std::vector<EngineStreams> peerStreams;
  std::vector<SourceLoc> sources;
  /// Every SBUF/PSUM tile's placement and live range, in program order of
  /// first use (empty for hand-built programs).
  std::vector<Allocation> allocations;
  /// Free-form JSON text (options, statistics) carried for `trnc inspect`.
  std::string metadataJson = "{}";

  /// Physical cores the program spans (its LNC degree).
  unsigned lnc() const { return 1 + unsigned(peerStreams.size()); }
  /// Physical core `c`'s streams (c < lnc()).
  const EngineStreams &coreStreams(unsigned c) const {
    return c ? peerStreams[c - 1] : streams;
  }
  EngineStreams &coreStreams(unsigned c) { return c ? peerStreams[c - 1] : streams; }

  /// Bytes of the scratch arena: the end of its furthest region, aligned
  /// (saturating at UINT64_MAX for hostile offsets; the verifier refuses
  /// those).
  uint64_t scratchArenaBytes() const;
  /// Bytes of the scratch regions laid end to end, each aligned: the arena
  /// unpacked, which packing never exceeds (saturating at 2^62).
  uint64_t scratchEndToEndBytes() const;
  size_t numInputs() const;
  size_t numOutputs() const;
  /// Region id of input/output `index`, or -1.
  int64_t inputRegion(uint32_t index) const;
  int64_t outputRegion(uint32_t index) const;
};

/// The program's I/O signature: one line per Input/Output region, inputs
/// first, each "input 0 f32 [2, 3] strides [3, 1] bytes 24". What a caller
/// must bind; the cache records it next to an entry and compares it on
/// every hit (docs/cache.md).
std::string ioSignature(const Program &program);

/// "vector stream instruction 12 (tensor_tensor)", followed by the source
/// location when the instruction carries a valid one. Used by every message
/// that names an instruction (verifier, loader, simulator).
std::string describeInstruction(const Program &program, isa::Engine stream,
                                size_t index);
/// The same for physical core `core`'s stream; at LNC=2 the text starts
/// with "core N ".
std::string describeInstruction(const Program &program, unsigned core,
                                isa::Engine stream, size_t index);

} // namespace trnc
