//===- Artifact.cpp - Write and read the on-disk trnc artifact ------------===//
//
// Layout (all integers little-endian):
//   header   8-byte magic "TRNCART\0", u32 format version, u32 ISA version,
//            u32 section count, u32 reserved (0)
//   table    per section: u32 kind, u32 reserved, u64 offset, u64 size,
//            u64 xxh3_64 of the section bytes
//   sections in kind order, each starting on an 8-byte boundary:
//     metadata  strings target, name, compilerVersion, metadataJson
//     regions   u32 count, then per region: u8 kind, u8 dtype, u16 0,
//               u32 index, u64 bytes, u32 rank, rank x i64 shape,
//               u32 nstrides, nstrides x i64 strides, u64 offset (a
//               constant: into the constants section; scratch, format 4:
//               into the scratch arena), u64 constant size
//     stream    (kind 16 + core x 5 + engine; format 3: one set of five
//               per physical core, core 1's only at LNC=2) u32 count,
//               u32 0, count x 320-byte instruction words
//     constants the constant regions' bytes, each 64-byte aligned
//     sources   u32 count, then per source: strings op, node, file, u32 line
//     allocations (format 2) u32 count, u32 0, then per tile 48 bytes: u8
//               space, u8 first engine, u8 last engine, u8 core (format
//               3; 0 before), u32
//               partitions, u64 address, u64 bytes, u64 first, u64 last,
//               u32 first index, u32 last index
//   (a string is u32 length + bytes)
// The section count says the LNC degree: 10 sections at LNC=1, 15 at
// LNC=2. Every section kind appears exactly once. The reader checks each step and
// never trusts a length before comparing it with the bytes that remain.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"

#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace trnc {
namespace {

constexpr char kMagic[8] = {'T', 'R', 'N', 'C', 'A', 'R', 'T', '\0'};
constexpr size_t kHeaderBytes = 24;
constexpr size_t kTableEntryBytes = 32;

enum class SectionKind : uint32_t {
  Metadata = 1,
  Regions = 2,
  Constants = 3,
  Sources = 4,
  Allocations = 5,
  StreamBase = 16, // + core x kNumEngines + engine number
};
constexpr uint32_t kNumSections1 = 5 + isa::kNumEngines; // LNC=1
/// Sections of a program of `lnc` physical cores.
constexpr uint32_t sectionCount(unsigned lnc) { return 5 + lnc * isa::kNumEngines; }
constexpr uint32_t kEndKinds = 16 + kMaxLnc * isa::kNumEngines;
constexpr uint64_t kAllocationBytes = 48;

std::string sectionName(uint32_t kind) {
  switch (kind) {
  case 1: return "metadata";
  case 2: return "regions";
  case 3: return "constants";
  case 4: return "sources";
  case 5: return "allocations";
  }
  if (kind >= 16 && kind < kEndKinds) {
    unsigned core = (kind - 16) / isa::kNumEngines;
    return (core ? "core " + std::to_string(core) + " " : std::string()) +
           std::string(isa::engineName(isa::Engine((kind - 16) % isa::kNumEngines))) +
           " stream";
  }
  return "unknown section kind " + std::to_string(kind);
}

/// The kinds in file order for `lnc` cores: metadata, regions, every
/// core's streams, constants, sources, allocations.
uint32_t sectionKindAt(uint32_t i, unsigned lnc) {
  uint32_t streams = lnc * isa::kNumEngines;
  if (i < 2)
    return i + 1;
  if (i < 2 + streams)
    return uint32_t(SectionKind::StreamBase) + (i - 2);
  return 3 + (i - 2 - streams);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

class ByteWriter {
public:
  std::vector<uint8_t> bytes;

  void u8(uint8_t v) { bytes.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(uint64_t(v), 8); }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void align(size_t a) {
    while (bytes.size() % a)
      bytes.push_back(0);
  }

private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      bytes.push_back(uint8_t(v >> (8 * i)));
  }
};

std::vector<uint8_t> writeSection(const Program &p, uint32_t kind,
                                  std::vector<uint64_t> &constantOffsets) {
  ByteWriter w;
  switch (kind) {
  case uint32_t(SectionKind::Metadata):
    w.str(p.target);
    w.str(p.name);
    w.str(p.compilerVersion);
    w.str(p.metadataJson);
    break;
  case uint32_t(SectionKind::Regions): {
    w.u32(uint32_t(p.regions.size()));
    for (size_t i = 0; i < p.regions.size(); ++i) {
      const Region &r = p.regions[i];
      w.u8(uint8_t(r.kind));
      w.u8(uint8_t(r.dtype));
      w.u16(0);
      w.u32(r.index);
      w.u64(r.bytes);
      w.u32(uint32_t(r.shape.size()));
      for (int64_t d : r.shape)
        w.i64(d);
      w.u32(uint32_t(r.strides.size()));
      for (int64_t s : r.strides)
        w.i64(s);
      bool constant = r.kind == Region::Kind::Constant;
      bool scratch = r.kind == Region::Kind::Scratch;
      w.u64(constant ? constantOffsets[i] : scratch ? r.arenaOffset : 0);
      w.u64(constant ? r.data.size() : 0);
    }
    break;
  }
  case uint32_t(SectionKind::Constants):
    for (const Region &r : p.regions) {
      if (r.kind != Region::Kind::Constant)
        continue;
      w.align(64);
      w.raw(r.data.data(), r.data.size());
    }
    break;
  case uint32_t(SectionKind::Sources):
    w.u32(uint32_t(p.sources.size()));
    for (const SourceLoc &s : p.sources) {
      w.str(s.op);
      w.str(s.node);
      w.str(s.file);
      w.u32(s.line);
    }
    break;
  case uint32_t(SectionKind::Allocations):
    w.u32(uint32_t(p.allocations.size()));
    w.u32(0);
    for (const Allocation &a : p.allocations) {
      w.u8(uint8_t(a.space));
      w.u8(uint8_t(a.firstAt.engine));
      w.u8(uint8_t(a.lastAt.engine));
      w.u8(a.core);
      w.u32(a.partitions);
      w.u64(a.address);
      w.u64(a.bytes);
      w.u64(a.first);
      w.u64(a.last);
      w.u32(a.firstAt.index);
      w.u32(a.lastAt.index);
    }
    break;
  default: {
    uint32_t slot = kind - uint32_t(SectionKind::StreamBase);
    const auto &stream =
        p.coreStreams(slot / isa::kNumEngines)[slot % isa::kNumEngines];
    w.u32(uint32_t(stream.size()));
    w.u32(0);
    size_t at = w.bytes.size();
    w.bytes.resize(at + stream.size() * isa::kInstructionBytes);
    for (size_t i = 0; i < stream.size(); ++i)
      isa::encode(stream[i], w.bytes.data() + at + i * isa::kInstructionBytes);
    break;
  }
  }
  return std::move(w.bytes);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

llvm::Error fail(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "invalid trnc artifact: " + msg);
}

/// A bounds-checked cursor over one section. Every read reports truncation
/// instead of reading past the end.
class ByteReader {
public:
  ByteReader(llvm::ArrayRef<uint8_t> bytes, std::string what)
      : bytes(bytes), what(std::move(what)) {}

  size_t remaining() const { return bytes.size() - pos; }
  size_t position() const { return pos; }

  llvm::Error u8(uint8_t &v) { return le(v, 1); }
  llvm::Error u16(uint16_t &v) { return le(v, 2); }
  llvm::Error u32(uint32_t &v) { return le(v, 4); }
  llvm::Error u64(uint64_t &v) { return le(v, 8); }
  llvm::Error i64(int64_t &v) {
    uint64_t u;
    if (llvm::Error e = le(u, 8))
      return e;
    v = int64_t(u);
    return llvm::Error::success();
  }
  llvm::Error str(std::string &s, const char *field) {
    uint32_t n;
    if (llvm::Error e = u32(n))
      return e;
    if (n > remaining())
      return error(std::string(field) + " length " + std::to_string(n) +
                   " exceeds the " + std::to_string(remaining()) +
                   " bytes left");
    s.assign(reinterpret_cast<const char *>(bytes.data() + pos), n);
    pos += n;
    return llvm::Error::success();
  }
  /// Check that `count` items of at least `itemBytes` each can still follow
  /// (so a corrupt count never drives a huge allocation).
  llvm::Error fits(uint64_t count, uint64_t itemBytes, const char *field) {
    if (itemBytes && count > remaining() / itemBytes)
      return error(std::string(field) + " count " + std::to_string(count) +
                   " does not fit in the " + std::to_string(remaining()) +
                   " bytes left");
    return llvm::Error::success();
  }
  /// Refuse bytes left over after the section's last field.
  llvm::Error finish() const {
    if (remaining())
      return error(std::to_string(remaining()) + " trailing bytes");
    return llvm::Error::success();
  }
  llvm::Error error(const std::string &msg) const {
    return fail(what + " section: " + msg + " (at byte " + std::to_string(pos) +
                ")");
  }

private:
  template <typename T> llvm::Error le(T &v, unsigned n) {
    if (remaining() < n)
      return error("truncated: needs " + std::to_string(n) + " more bytes, " +
                   std::to_string(remaining()) + " left");
    uint64_t x = 0;
    for (unsigned i = 0; i < n; ++i)
      x |= uint64_t(bytes[pos + i]) << (8 * i);
    v = T(x);
    pos += n;
    return llvm::Error::success();
  }

  llvm::ArrayRef<uint8_t> bytes;
  std::string what;
  size_t pos = 0;
};

#define TRY(expr)                                                              \
  if (llvm::Error _e = (expr))                                                 \
  return _e

llvm::Error readMetadata(ByteReader &r, Program &p) {
  TRY(r.str(p.target, "target"));
  TRY(r.str(p.name, "name"));
  TRY(r.str(p.compilerVersion, "compilerVersion"));
  TRY(r.str(p.metadataJson, "metadataJson"));
  return r.finish();
}

llvm::Error readRegions(ByteReader &r, llvm::ArrayRef<uint8_t> constants,
                        Program &p) {
  uint32_t n;
  TRY(r.u32(n));
  TRY(r.fits(n, 40, "region"));
  p.regions.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Region &reg = p.regions[i];
    uint8_t kind, dtype;
    uint16_t pad;
    TRY(r.u8(kind));
    TRY(r.u8(dtype));
    TRY(r.u16(pad));
    reg.kind = Region::Kind(kind);
    reg.dtype = isa::DType(dtype);
    TRY(r.u32(reg.index));
    TRY(r.u64(reg.bytes));
    uint32_t rank, nstrides;
    TRY(r.u32(rank));
    TRY(r.fits(rank, 8, "shape"));
    reg.shape.resize(rank);
    for (int64_t &d : reg.shape)
      TRY(r.i64(d));
    TRY(r.u32(nstrides));
    TRY(r.fits(nstrides, 8, "stride"));
    reg.strides.resize(nstrides);
    for (int64_t &s : reg.strides)
      TRY(r.i64(s));
    uint64_t off, size;
    TRY(r.u64(off));
    TRY(r.u64(size));
    if (pad != 0)
      return r.error("region " + std::to_string(i) + " reserved bytes not zero");
    if (reg.kind == Region::Kind::Scratch) {
      if (size)
        return r.error("region " + std::to_string(i) +
                       " is scratch but names constant bytes");
      reg.arenaOffset = off; // the verifier checks its alignment and range
      continue;
    }
    if (reg.kind != Region::Kind::Constant) {
      if (off || size)
        return r.error("region " + std::to_string(i) +
                       " is not constant but names constant bytes");
      continue;
    }
    if (off > constants.size() || size > constants.size() - off)
      return r.error("region " + std::to_string(i) + " constant bytes " +
                     std::to_string(off) + "+" + std::to_string(size) +
                     " exceed the " + std::to_string(constants.size()) +
                     "-byte constants section");
    reg.data.assign(constants.begin() + off, constants.begin() + off + size);
  }
  return r.finish();
}

llvm::Error readStream(ByteReader &r, unsigned core, isa::Engine engine,
                       size_t sectionSize, llvm::ArrayRef<uint8_t> bytes,
                       Program &p) {
  uint32_t n, pad;
  TRY(r.u32(n));
  TRY(r.u32(pad));
  if (pad != 0)
    return r.error("reserved bytes not zero");
  if (uint64_t(n) * isa::kInstructionBytes != sectionSize - 8)
    return r.error("holds " + std::to_string(sectionSize - 8) +
                   " bytes of instructions, expected " + std::to_string(n) +
                   " x " + std::to_string(isa::kInstructionBytes));
  auto &stream = p.coreStreams(core)[size_t(engine)];
  stream.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t *word = bytes.data() + 8 + size_t(i) * isa::kInstructionBytes;
    if (auto at = isa::firstNonZeroReservedByte(word))
      return fail((core ? "core " + std::to_string(core) + " " : std::string()) +
                  std::string(isa::engineName(engine)) +
                  " stream instruction " + std::to_string(i) +
                  ": reserved byte " + std::to_string(*at) + " is not zero");
    stream[i] = isa::decode(word);
  }
  return llvm::Error::success();
}

llvm::Error readSources(ByteReader &r, Program &p) {
  uint32_t n;
  TRY(r.u32(n));
  TRY(r.fits(n, 16, "source"));
  p.sources.resize(n);
  for (SourceLoc &s : p.sources) {
    TRY(r.str(s.op, "op"));
    TRY(r.str(s.node, "node"));
    TRY(r.str(s.file, "file"));
    TRY(r.u32(s.line));
  }
  return r.finish();
}

/// Decodes the table only; verifyProgram checks the values against the
/// streams and the memories.
llvm::Error readAllocations(ByteReader &r, Program &p) {
  uint32_t n, pad;
  TRY(r.u32(n));
  TRY(r.u32(pad));
  if (pad != 0)
    return r.error("reserved bytes not zero");
  TRY(r.fits(n, kAllocationBytes, "allocation"));
  p.allocations.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Allocation &a = p.allocations[i];
    uint8_t space, firstEngine, lastEngine;
    TRY(r.u8(space));
    TRY(r.u8(firstEngine));
    TRY(r.u8(lastEngine));
    TRY(r.u8(a.core));
    TRY(r.u32(a.partitions));
    TRY(r.u64(a.address));
    TRY(r.u64(a.bytes));
    TRY(r.u64(a.first));
    TRY(r.u64(a.last));
    TRY(r.u32(a.firstAt.index));
    TRY(r.u32(a.lastAt.index));
    if (a.core >= p.lnc())
      return r.error("allocation " + std::to_string(i) + " is on physical core " +
                     std::to_string(a.core) + ", the program has " +
                     std::to_string(p.lnc()));
    if (space > uint8_t(Allocation::Space::Psum))
      return r.error("allocation " + std::to_string(i) + " has memory space " +
                     std::to_string(space) + " (0 SBUF, 1 PSUM)");
    if (firstEngine >= isa::kNumEngines || lastEngine >= isa::kNumEngines)
      return r.error("allocation " + std::to_string(i) + " names engine " +
                     std::to_string(std::max(firstEngine, lastEngine)) + ", engines are 0.." +
                     std::to_string(isa::kNumEngines - 1));
    a.space = Allocation::Space(space);
    a.firstAt.engine = isa::Engine(firstEngine);
    a.lastAt.engine = isa::Engine(lastEngine);
  }
  return r.finish();
}

#undef TRY

} // namespace

std::vector<uint8_t> writeArtifact(const Program &program) {
  // Constant offsets are known before the regions section is written.
  std::vector<uint64_t> constantOffsets(program.regions.size(), 0);
  uint64_t at = 0;
  for (size_t i = 0; i < program.regions.size(); ++i) {
    if (program.regions[i].kind != Region::Kind::Constant)
      continue;
    at = (at + 63) / 64 * 64;
    constantOffsets[i] = at;
    at += program.regions[i].data.size();
  }

  const unsigned lnc = program.lnc();
  const uint32_t count = sectionCount(lnc);
  std::vector<std::vector<uint8_t>> sections;
  for (uint32_t i = 0; i < count; ++i)
    sections.push_back(
        writeSection(program, sectionKindAt(i, lnc), constantOffsets));

  ByteWriter w;
  w.raw(kMagic, sizeof(kMagic));
  w.u32(kArtifactFormatVersion);
  w.u32(isa::kIsaVersion);
  w.u32(count);
  w.u32(0);
  uint64_t offset = kHeaderBytes + count * kTableEntryBytes;
  for (uint32_t i = 0; i < count; ++i) {
    offset = (offset + 7) / 8 * 8;
    w.u32(sectionKindAt(i, lnc));
    w.u32(0);
    w.u64(offset);
    w.u64(sections[i].size());
    w.u64(llvm::xxh3_64bits(sections[i]));
    offset += sections[i].size();
  }
  for (const auto &s : sections) {
    w.align(8);
    w.raw(s.data(), s.size());
  }
  return std::move(w.bytes);
}

std::optional<uint32_t> artifactFormatVersion(llvm::ArrayRef<uint8_t> bytes) {
  if (bytes.size() < sizeof(kMagic) + 4 ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return std::nullopt;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(bytes[sizeof(kMagic) + i]) << (8 * i);
  return v;
}

llvm::Expected<Program> readArtifact(llvm::ArrayRef<uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes)
    return fail("file is " + std::to_string(bytes.size()) +
                " bytes, shorter than the " + std::to_string(kHeaderBytes) +
                "-byte header");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return fail("bad magic (expected \"TRNCART\\0\"; not a trnc artifact)");
  ByteReader header(bytes.slice(8, kHeaderBytes - 8), "header");
  uint32_t format, isaVersion, numSections, reserved;
  if (llvm::Error e = header.u32(format))
    return std::move(e);
  if (llvm::Error e = header.u32(isaVersion))
    return std::move(e);
  if (llvm::Error e = header.u32(numSections))
    return std::move(e);
  if (llvm::Error e = header.u32(reserved))
    return std::move(e);
  if (format != kArtifactFormatVersion)
    return fail("format version " + std::to_string(format) +
                " found, this runtime reads version " +
                std::to_string(kArtifactFormatVersion) +
                (format < kArtifactFormatVersion
                     ? " (written by an older trnc: recompile the graph)"
                     : " (written by a newer trnc)"));
  if (isaVersion != isa::kIsaVersion)
    return fail("ISA version " + std::to_string(isaVersion) +
                " found, this runtime implements version " +
                std::to_string(isa::kIsaVersion) +
                (isaVersion < isa::kIsaVersion
                     ? " (written by an older trnc: recompile the graph)"
                     : " (written by a newer trnc)"));
  if (reserved != 0)
    return fail("header reserved bytes are not zero");
  unsigned lnc = 0;
  for (unsigned d = 1; d <= kMaxLnc; ++d)
    if (numSections == sectionCount(d))
      lnc = d;
  if (!lnc)
    return fail("section table has " + std::to_string(numSections) +
                " sections, expected " + std::to_string(kNumSections1) +
                " (one physical core) or " + std::to_string(sectionCount(kMaxLnc)) +
                " (LNC=" + std::to_string(kMaxLnc) + ")");
  const size_t tableEnd = kHeaderBytes + numSections * kTableEntryBytes;
  if (bytes.size() < tableEnd)
    return fail("file is " + std::to_string(bytes.size()) +
                " bytes, truncated inside the section table (ends at " +
                std::to_string(tableEnd) + ")");

  // Locate and checksum every section before decoding any of them.
  llvm::ArrayRef<uint8_t> section[kEndKinds];
  uint64_t dataEnd = tableEnd;
  ByteReader table(bytes.slice(kHeaderBytes, tableEnd - kHeaderBytes),
                   "section table");
  for (uint32_t i = 0; i < numSections; ++i) {
    uint32_t kind, pad;
    uint64_t offset, size, checksum;
    if (llvm::Error e = table.u32(kind))
      return std::move(e);
    if (llvm::Error e = table.u32(pad))
      return std::move(e);
    if (llvm::Error e = table.u64(offset))
      return std::move(e);
    if (llvm::Error e = table.u64(size))
      return std::move(e);
    if (llvm::Error e = table.u64(checksum))
      return std::move(e);
    std::string name = sectionName(kind);
    // The layout is canonical (fixed order, 8-byte aligned, zero padding,
    // nothing after the last section), so every byte of the file is checked
    // by something: a flipped bit anywhere is refused.
    if (kind != sectionKindAt(i, lnc))
      return fail("section table entry " + std::to_string(i) + " is " + name +
                  ", expected the " + sectionName(sectionKindAt(i, lnc)) +
                  " section");
    if (pad != 0)
      return fail(name + " section: table entry reserved bytes not zero");
    uint64_t expected = (dataEnd + 7) / 8 * 8;
    if (offset != expected)
      return fail(name + " section: offset " + std::to_string(offset) +
                  ", expected " + std::to_string(expected));
    if (offset > bytes.size() || size > bytes.size() - offset)
      return fail(name + " section: bytes " + std::to_string(offset) + "+" +
                  std::to_string(size) + " lie outside the " +
                  std::to_string(bytes.size()) + "-byte file (truncated?)");
    for (uint64_t b = dataEnd; b < offset; ++b)
      if (bytes[b] != 0)
        return fail(name + " section: padding byte " + std::to_string(b) +
                    " is not zero");
    section[kind] = bytes.slice(offset, size);
    dataEnd = offset + size;
    if (llvm::xxh3_64bits(section[kind]) != checksum)
      return fail(name + " section: checksum mismatch (file is corrupt)");
  }
  if (dataEnd != bytes.size())
    return fail(std::to_string(bytes.size() - dataEnd) +
                " trailing bytes after the last section");

  Program p;
  p.peerStreams.resize(lnc - 1);
  {
    ByteReader r(section[uint32_t(SectionKind::Metadata)], "metadata");
    if (llvm::Error e = readMetadata(r, p))
      return std::move(e);
  }
  {
    ByteReader r(section[uint32_t(SectionKind::Regions)], "regions");
    if (llvm::Error e =
            readRegions(r, section[uint32_t(SectionKind::Constants)], p))
      return std::move(e);
  }
  for (unsigned c = 0; c < lnc; ++c)
    for (unsigned e = 0; e < isa::kNumEngines; ++e) {
      uint32_t kind = uint32_t(SectionKind::StreamBase) + c * isa::kNumEngines + e;
      ByteReader r(section[kind], sectionName(kind));
      if (llvm::Error err = readStream(r, c, isa::Engine(e),
                                       section[kind].size(), section[kind], p))
        return std::move(err);
    }
  {
    ByteReader r(section[uint32_t(SectionKind::Sources)], "sources");
    if (llvm::Error e = readSources(r, p))
      return std::move(e);
  }
  {
    ByteReader r(section[uint32_t(SectionKind::Allocations)], "allocations");
    if (llvm::Error e = readAllocations(r, p))
      return std::move(e);
  }
  if (llvm::Error e = verifyProgram(p))
    return std::move(e);
  return std::move(p);
}

} // namespace trnc
