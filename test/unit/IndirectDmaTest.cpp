//===- IndirectDmaTest.cpp - dma_indirect semantics, cost and rules -------===//
//
// dma_indirect (Isa.h DmaIndirect) against reference loops: gather with
// out-of-range zero rows and a bf16 cast, scatter with last-writer-wins and
// with fp32 accumulation of duplicate indices; its cost (one descriptor per
// row); the race checker's footprint (every table row); and the verifier's
// operand rules.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "sim/CostModel.h"
#include "sim/RaceChecker.h"

#include <random>

using namespace trnc;
using namespace trnc::test;

namespace {

constexpr uint32_t kN = 10, kD = 6;

std::vector<float> tableData() {
  std::vector<float> t(kN * kD);
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = 0.1f * float(i) + 1.0f / 3.0f;
  return t;
}

/// dma_indirect with its index tile [P, 1] at SBUF offset 0 of partitions
/// 0..P-1 (loaded from input region `idxRegion`).
Instruction indirect(bool scatter, int P) {
  Instruction i = make(Opcode::DmaIndirect, Engine::Dma);
  i.flags = scatter ? kFlagScatter : 0;
  i.src1 = sbuf(DType::I32, 0, uint16_t(P), 0, {1});
  return i;
}

/// Gathers rows `idx` of the kN x kD f32 table into an SBUF tile of dtype
/// `chip`, then copies it out as f32.
std::vector<float> runGather(const std::vector<int32_t> &idx, DType chip) {
  const int P = int(idx.size());
  Builder b;
  uint32_t table = b.input(DType::F32, kN * kD * 4);
  uint32_t index = b.input(DType::I32, P * 4);
  uint32_t out = b.output(DType::F32, P * kD * 4);
  b.dma(sbuf(DType::I32, 0, P, 0, {1}), hbm(index, DType::I32, 0, P, 1, {1}));
  Instruction g = indirect(false, P);
  g.dst = sbuf(chip, 0, P, 64, {kD});
  g.src0 = hbm(table, DType::F32, 0, kN, kD, {kD});
  b.add(g);
  b.dma(hbm(out, DType::F32, 0, P, kD, {kD}), sbuf(chip, 0, P, 64, {kD}));
  std::vector<float> t = tableData(), y(P * kD, -7.0f);
  std::vector<int32_t> i = idx;
  REQUIRE(run(b.p, {t.data(), i.data()}, {y.data()}) == "");
  return y;
}

/// out = base, then scatter the P rows of `src` to rows `idx` of out.
std::vector<float> runScatter(const std::vector<int32_t> &idx,
                              const std::vector<float> &src, bool accumulate,
                              DType dt = DType::F32) {
  const int P = int(idx.size());
  Builder b;
  const unsigned eb = dtypeBytes(dt);
  uint32_t base = b.input(dt, kN * kD * eb);
  uint32_t index = b.input(DType::I32, P * 4);
  uint32_t rows = b.input(DType::F32, P * kD * 4);
  uint32_t out = b.output(dt, kN * kD * eb);
  b.dma(hbm(out, dt, 0, kN, kD, {kD}), hbm(base, dt, 0, kN, kD, {kD}));
  b.dma(sbuf(DType::I32, 0, P, 0, {1}), hbm(index, DType::I32, 0, P, 1, {1}));
  b.dma(sbuf(DType::F32, 0, P, 64, {kD}), hbm(rows, DType::F32, 0, P, kD, {kD}));
  Instruction s = indirect(true, P);
  if (accumulate)
    s.flags |= kFlagAccumulate;
  s.src0 = sbuf(DType::F32, 0, P, 64, {kD});
  s.dst = hbm(out, dt, 0, kN, kD, {kD});
  b.add(s);
  std::vector<float> t = tableData();
  std::vector<uint8_t> baseBytes(kN * kD * eb), y(kN * kD * eb);
  for (size_t k = 0; k < t.size(); ++k)
    sim::storeElement(baseBytes.data() + k * eb, dt, t[k]);
  std::vector<int32_t> i = idx;
  std::vector<float> r = src;
  REQUIRE(run(b.p, {baseBytes.data(), i.data(), r.data()}, {y.data()}) == "");
  std::vector<float> outF(kN * kD);
  for (size_t k = 0; k < outF.size(); ++k)
    outF[k] = sim::loadElement(y.data() + k * eb, dt);
  return outF;
}

/// Verifies `p` and runs it under the race checker on an input and an
/// output of kN x kD floats: the error text ("" when race-free).
std::string runRaceChecked(const Program &p) {
  REQUIRE(errorText(verifyProgram(p)) == "");
  Simulator sim(*lookupMachineModel(p.target));
  RaceChecker checker;
  RunOptions options;
  options.observer = &checker;
  std::vector<float> x(kN * kD, 1.0f), y(kN * kD, 0.0f);
  return errorText(sim.run(p, {x.data()}, {y.data()}, options, nullptr));
}

std::vector<float> srcRows(int P) {
  std::vector<float> s(P * kD);
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = 100.0f + float(i) * 0.25f;
  return s;
}

} // namespace

TEST_CASE("dma_indirect gathers rows, zeros for out-of-range indices",
          "[sim][indirect]") {
  std::vector<int32_t> idx = {3, 0, 9, -1, 10, 3, 100, 7};
  std::vector<float> y = runGather(idx, DType::F32), t = tableData();
  for (size_t p = 0; p < idx.size(); ++p)
    for (uint32_t d = 0; d < kD; ++d) {
      bool in = idx[p] >= 0 && idx[p] < int32_t(kN);
      CHECK(y[p * kD + d] == (in ? t[idx[p] * kD + d] : 0.0f));
    }
}

TEST_CASE("dma_indirect gather casts to the SBUF dtype (bf16)",
          "[sim][indirect]") {
  std::vector<int32_t> idx = {5, 1, -3, 2};
  std::vector<float> y = runGather(idx, DType::BF16), t = tableData();
  for (size_t p = 0; p < idx.size(); ++p)
    for (uint32_t d = 0; d < kD; ++d)
      CHECK(y[p * kD + d] ==
            (idx[p] >= 0 ? roundBf16(t[idx[p] * kD + d]) : 0.0f));
}

TEST_CASE("dma_indirect scatter: rows in partition order, last writer wins",
          "[sim][indirect]") {
  std::vector<int32_t> idx = {4, 1, 4, -1, 12, 0, 1};
  std::vector<float> src = srcRows(int(idx.size()));
  std::vector<float> y = runScatter(idx, src, false), ref = tableData();
  for (size_t p = 0; p < idx.size(); ++p)
    if (idx[p] >= 0 && idx[p] < int32_t(kN))
      for (uint32_t d = 0; d < kD; ++d)
        ref[idx[p] * kD + d] = src[p * kD + d];
  CHECK(y == ref);
}

TEST_CASE("dma_indirect scatter accumulates duplicates in fp32",
          "[sim][indirect]") {
  std::vector<int32_t> idx = {2, 2, 7, 2, -5, 7, 9};
  std::vector<float> src = srcRows(int(idx.size()));
  for (DType dt : {DType::F32, DType::BF16}) {
    std::vector<float> y = runScatter(idx, src, true, dt), t = tableData();
    std::vector<float> acc(kN * kD);
    for (size_t k = 0; k < acc.size(); ++k)
      acc[k] = dt == DType::BF16 ? roundBf16(t[k]) : t[k];
    // Each add reads the row as stored (cast), adds in fp32, casts back.
    for (size_t p = 0; p < idx.size(); ++p)
      if (idx[p] >= 0 && idx[p] < int32_t(kN))
        for (uint32_t d = 0; d < kD; ++d) {
          float &r = acc[idx[p] * kD + d];
          r = r + src[p * kD + d];
          if (dt == DType::BF16)
            r = roundBf16(r);
        }
    CHECK(y == acc);
  }
}

TEST_CASE("dma_indirect costs one descriptor per row", "[sim][indirect]") {
  Instruction g = indirect(false, 128);
  g.dst = sbuf(DType::F32, 0, 128, 64, {16});
  g.src0 = hbm(0, DType::F32, 0, 50000, 16, {16});
  // P rows of 64 bytes move, not the N rows of the table; the rows never
  // merge into one long descriptor as a contiguous dma_copy's would.
  CHECK(sim::dmaBytes(g) == 128 * 64);
  CHECK(sim::dmaHbmBytes(g) == 128 * 64);
  CHECK(sim::dmaRowBytes(g) == 64);
  Instruction s = indirect(true, 128);
  s.flags |= kFlagAccumulate;
  s.src0 = g.dst;
  s.dst = g.src0;
  CHECK(sim::dmaBytes(s) == 128 * 64);
  CHECK(sim::dmaHbmBytes(s) == 2 * 128 * 64); // read-modify-write
}

namespace {
/// verifyProgram's message for an 8-row gather (or scatter) between an SBUF
/// tile and a kN x kD f32 table, as `mutate` leaves it ("" when valid).
template <typename Mutate>
std::string verifyIndirect(bool scatter, Mutate mutate) {
  Builder b;
  uint32_t table = b.input(DType::F32, kN * kD * 4);
  b.output(DType::F32, 4);
  Instruction i = indirect(scatter, 8);
  (scatter ? i.src0 : i.dst) = sbuf(DType::F32, 0, 8, 64, {kD});
  (scatter ? i.dst : i.src0) = hbm(table, DType::F32, 0, kN, kD, {kD});
  mutate(i);
  b.add(i);
  return errorText(verifyProgram(b.p));
}
} // namespace

TEST_CASE("dma_indirect operand rules", "[verify][indirect]") {
  auto verifyGather = [](auto mutate) { return verifyIndirect(false, mutate); };
  CHECK(verifyGather([](Instruction &) {}) == "");
  CHECK(contains(verifyGather([](Instruction &g) { g.src1.dtype = DType::F32; }),
                 "index src1 must be an SBUF i32 tile, found sbuf f32"));
  CHECK(contains(verifyGather([](Instruction &g) {
                   g.src1 = hbm(0, DType::I32, 0, 8, 1, {1});
                 }),
                 "index src1 must be an SBUF i32 tile"));
  CHECK(contains(verifyGather([](Instruction &g) { g.src1.count[0] = 2; }),
                 "index src1 must be [8, 1]"));
  CHECK(contains(verifyGather([](Instruction &g) { g.src1.partitionCount = 4; }),
                 "index src1 must be [8, 1]"));
  // Every one of the table's N rows must lie inside its region.
  CHECK(contains(verifyGather([](Instruction &g) { g.src0.partitionCount = kN + 1; }),
                 "outside its 240 bytes"));
  CHECK(contains(verifyGather([](Instruction &g) { g.dst.count[0] = kD - 1; }),
                 "dst has 5 elements per partition but a row of src0 has 6"));
  CHECK(contains(verifyGather([](Instruction &g) { g.flags |= kFlagAccumulate; }),
                 "accumulates only when it scatters"));
  CHECK(contains(verifyGather([](Instruction &g) { g.flags |= kFlagScatter; }),
                 "src0 must be in SBUF"));
  CHECK(contains(verifyGather([](Instruction &g) { g.flags = kFlagReverse1; }),
                 "not valid for dma_indirect"));
  CHECK(contains(verifyGather([](Instruction &g) { g.flags |= kFlagIdempotent; }),
                 "idempotent only as a scatter without accumulate"));
  CHECK(contains(verifyGather([](Instruction &g) { g.dmaQueue = 16; }),
                 "at most 15"));
  CHECK(contains(verifyGather([](Instruction &g) { g.engine = Engine::GpSimd; }),
                 "cannot run on the gpsimd engine"));
  CHECK(contains(verifyGather([](Instruction &g) { g.dst.dtype = DType::I64; }),
                 "i64 is only valid"));
}

TEST_CASE("dma_indirect: the race checker sees every row of the table",
          "[sim][indirect][race]") {
  // A scatter on queue 1 and a copy into row 9 on queue 0 touch different
  // bytes at run time (the index names row 0), but nothing orders them and
  // the scatter may write any row: a race. Ordered by the queue-0
  // semaphore, none.
  for (bool ordered : {false, true}) {
    Program p;
    p.target = "trn2";
    p.name = "race";
    Builder b;
    uint32_t in = b.input(DType::F32, kN * kD * 4);
    uint32_t out = b.output(DType::F32, kN * kD * 4);
    p.regions = b.p.regions;
    auto &dma = p.streams[size_t(Engine::Dma)];
    Instruction idx = make(Opcode::Memset, Engine::Vector);
    idx.dst = sbuf(DType::I32, 0, 1, 0, {1});
    idx.signal = uint8_t(Engine::Vector);
    p.streams[size_t(Engine::Vector)].push_back(idx);
    Instruction row = make(Opcode::DmaCopy, Engine::Dma);
    row.dst = hbm(out, DType::F32, 9 * kD * 4, 1, kD, {kD});
    row.src0 = hbm(in, DType::F32, 0, 1, kD, {kD});
    row.signal = completionSemaphore(Engine::Dma, 0);
    dma.push_back(row);
    Instruction s = indirect(true, 1);
    s.dmaQueue = 1;
    s.src0 = sbuf(DType::F32, 0, 1, 64, {kD});
    s.dst = hbm(out, DType::F32, 0, kN, kD, {kD});
    s.waits[s.numWaits++] = {uint8_t(Engine::Vector), 1};
    if (ordered)
      s.waits[s.numWaits++] = {completionSemaphore(Engine::Dma, 0), 1};
    dma.push_back(s);
    std::string err = runRaceChecked(p);
    if (ordered)
      CHECK(err == "");
    else
      CHECK(contains(err, "race"));
  }
}

TEST_CASE("dma_indirect: idempotent scatters need no order between them, "
          "what follows needs both", "[sim][indirect][race]") {
  // Two scatters of the same rows to the same indices on queues 1 and 2,
  // unordered, then a copy of the table on queue 3. Marked idempotent they
  // do not race with each other (plain, they do); the copy still races
  // with the one it does not wait for.
  auto runCase = [](bool idempotent, bool copyWaitsForBoth) {
    Builder b;
    uint32_t in = b.input(DType::F32, kN * kD * 4);
    uint32_t out = b.output(DType::F32, kN * kD * 4);
    Program p = b.p;
    auto &dma = p.streams[size_t(Engine::Dma)];
    Instruction idx = make(Opcode::Memset, Engine::Vector);
    idx.dst = sbuf(DType::I32, 0, 2, 0, {1});
    idx.signal = uint8_t(Engine::Vector);
    p.streams[size_t(Engine::Vector)].push_back(idx);
    for (uint16_t queue : {1, 2}) {
      Instruction s = indirect(true, 2);
      s.flags |= idempotent ? kFlagIdempotent : 0;
      s.dmaQueue = queue;
      s.src0 = sbuf(DType::F32, 0, 2, 64, {kD});
      s.dst = hbm(out, DType::F32, 0, kN, kD, {kD});
      s.waits[s.numWaits++] = {uint8_t(Engine::Vector), 1};
      s.signal = completionSemaphore(Engine::Dma, queue);
      dma.push_back(s);
    }
    Instruction copy = make(Opcode::DmaCopy, Engine::Dma);
    copy.dmaQueue = 3;
    copy.dst = hbm(in, DType::F32, 0, kN, kD, {kD});
    copy.src0 = hbm(out, DType::F32, 0, kN, kD, {kD});
    copy.waits[copy.numWaits++] = {completionSemaphore(Engine::Dma, 1), 1};
    if (copyWaitsForBoth)
      copy.waits[copy.numWaits++] = {completionSemaphore(Engine::Dma, 2), 1};
    dma.push_back(copy);
    return runRaceChecked(p);
  };
  CHECK(runCase(true, true) == "");
  std::string plain = runCase(false, true);
  INFO(plain);
  CHECK(contains(plain, "dma stream instruction 0 (dma_indirect) writes and dma "
                        "stream instruction 1 (dma_indirect) writes"));
  std::string early = runCase(true, false);
  INFO(early);
  CHECK(contains(early, "dma stream instruction 1 (dma_indirect) writes and dma "
                        "stream instruction 2 (dma_copy) reads"));
}

TEST_CASE("an idempotent dma_indirect is a scatter that stores",
          "[verify][indirect]") {
  CHECK(verifyIndirect(true, [](Instruction &s) { s.flags |= kFlagIdempotent; }) == "");
  CHECK(contains(verifyIndirect(true,
                                [](Instruction &s) {
                                  s.flags |= kFlagIdempotent | kFlagAccumulate;
                                }),
                 "idempotent only as a scatter without accumulate"));
}

TEST_CASE("dma_indirect: random shapes and indices match a reference loop",
          "[sim][indirect][fuzz]") {
  // Random table sizes, row widths and strides, block sizes, flags and
  // index values (in and out of range, duplicates); whatever the verifier
  // accepts must run and match the contract's loop.
  std::mt19937 rng(77);
  int accepted = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const uint32_t N = 1 + rng() % 20, D = 1 + rng() % 9, P = 1 + rng() % 128;
    const int64_t rowStride = D + rng() % 3; // padded rows
    const unsigned mode = rng() % 3;         // gather, scatter, scatter-add
    Builder b;
    uint32_t table = b.input(DType::F32, N * rowStride * 4);
    uint32_t index = b.input(DType::I32, P * 4);
    uint32_t rows = b.input(DType::F32, P * D * 4);
    uint32_t out = b.output(DType::F32, (mode ? N * rowStride : P * D) * 4);
    b.dma(sbuf(DType::I32, 0, P, 0, {1}), hbm(index, DType::I32, 0, P, 1, {1}));
    Instruction op = indirect(mode != 0, int(P));
    if (mode == 0) {
      op.dst = sbuf(DType::F32, 0, P, 64, {D});
      op.src0 = hbm(table, DType::F32, 0, N, rowStride, {D});
    } else {
      b.dma(hbm(out, DType::F32, 0, N, rowStride, {uint32_t(rowStride)}),
            hbm(table, DType::F32, 0, N, rowStride, {uint32_t(rowStride)}));
      b.dma(sbuf(DType::F32, 0, P, 64, {D}), hbm(rows, DType::F32, 0, P, D, {D}));
      op.flags |= mode == 2 ? kFlagAccumulate : 0;
      op.src0 = sbuf(DType::F32, 0, P, 64, {D});
      op.dst = hbm(out, DType::F32, 0, N, rowStride, {D});
    }
    if (rng() % 8 == 0) // sometimes one table row too many: refused
      (mode ? op.dst : op.src0).partitionCount = uint16_t(N + 1);
    b.add(op);
    if (mode == 0)
      b.dma(hbm(out, DType::F32, 0, P, D, {D}), sbuf(DType::F32, 0, P, 64, {D}));
    if (!errorText(verifyProgram(b.p)).empty())
      continue;
    ++accepted;
    std::vector<float> t(N * rowStride), r(P * D);
    std::vector<int32_t> idx(P);
    for (float &x : t)
      x = float(int(rng() % 1000)) / 8.0f;
    for (float &x : r)
      x = float(int(rng() % 1000)) / 4.0f;
    for (int32_t &i : idx)
      i = int32_t(rng() % (N + 6)) - 3;
    std::vector<float> y(mode ? N * rowStride : P * D, -1.0f);
    REQUIRE(run(b.p, {t.data(), idx.data(), r.data()}, {y.data()}) == "");
    std::vector<float> ref = mode ? t : std::vector<float>(P * D, 0.0f);
    for (uint32_t p = 0; p < P; ++p) {
      bool in = idx[p] >= 0 && idx[p] < int32_t(N);
      for (uint32_t d = 0; d < D && in; ++d) {
        if (mode == 0)
          ref[p * D + d] = t[idx[p] * rowStride + d];
        else if (mode == 1)
          ref[idx[p] * rowStride + d] = r[p * D + d];
        else
          ref[idx[p] * rowStride + d] += r[p * D + d];
      }
    }
    REQUIRE(y == ref);
  }
  CHECK(accepted > 200);
}
