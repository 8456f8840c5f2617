//===- SimFastPathTest.cpp - The simulator's fast paths keep its semantics ===//
//
// Same-dtype copies (common-dims rows and 16x16 blocks) against a reference
// walk of both patterns in row-major order, and the lazily zeroed scratch
// arena: on one Simulator, whatever an earlier run left in scratch, a run
// reads zeros wherever it has not written.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <numeric>

using namespace trnc;
using namespace trnc::test;

namespace {

/// Byte offsets of a pattern's elements from its start, in walk order.
std::vector<int64_t> offsets(const AccessPattern &ap) {
  int64_t eb = dtypeBytes(ap.dtype);
  std::vector<int64_t> out;
  for (uint32_t p = 0; p < ap.partitionCount; ++p) {
    std::vector<uint32_t> idx(ap.numDims, 0);
    for (bool more = true; more;) {
      int64_t off = int64_t(p) * ap.partitionStride;
      for (unsigned d = 0; d < ap.numDims; ++d)
        off += int64_t(idx[d]) * ap.stride[d];
      out.push_back(int64_t(ap.offset) + off * eb);
      more = false;
      for (int d = int(ap.numDims) - 1; d >= 0; --d)
        if (++idx[d] < ap.count[d]) {
          more = true;
          break;
        } else {
          idx[d] = 0;
        }
    }
  }
  return out;
}

/// HBM input -> HBM output through one dma_copy; compares every output byte
/// with the element-by-element reference.
void checkCopy(const AccessPattern &dst, const AccessPattern &src,
               size_t inBytes, size_t outBytes) {
  Builder b;
  uint32_t in = b.input(src.dtype, inBytes);
  uint32_t out = b.output(dst.dtype, outBytes);
  AccessPattern d = dst, s = src;
  d.region = out;
  s.region = in;
  b.dma(d, s);
  std::vector<uint8_t> x(inBytes), y(outBytes, 0xAB), want(outBytes, 0xAB);
  for (size_t i = 0; i < inBytes; ++i)
    x[i] = uint8_t(i * 7 + 3);
  std::vector<int64_t> od = offsets(d), os = offsets(s);
  REQUIRE(od.size() == os.size());
  unsigned eb = dtypeBytes(d.dtype);
  for (size_t i = 0; i < od.size(); ++i)
    std::memcpy(&want[od[i]], &x[os[i]], eb);
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  CHECK(y == want);
}

} // namespace

TEST_CASE("same-dtype copies match the element-order reference",
          "[sim][dma][fastpath]") {
  for (DType dt : {DType::F32, DType::BF16, DType::U8, DType::I64}) {
    int64_t eb = dtypeBytes(dt);
    SECTION(std::string("transpose ") + std::to_string(int(dt))) {
      // dst [40 rows, 24] = src^T, src [24, 40] row-major; then sizes with
      // ragged edges (not multiples of the 4 x 4 or 16 x 16 tiles).
      checkCopy(hbm(0, dt, 0, 40, 24, {24}), hbm(0, dt, 0, 40, 1, {24}, {40}),
                24 * 40 * eb, 24 * 40 * eb);
      checkCopy(hbm(0, dt, 0, 42, 23, {23}), hbm(0, dt, 0, 42, 1, {23}, {42}),
                23 * 42 * eb, 23 * 42 * eb);
      // And written transposed: dst strided, src rows contiguous.
      checkCopy(hbm(0, dt, 0, 42, 1, {23}, {42}), hbm(0, dt, 0, 42, 23, {23}),
                23 * 42 * eb, 23 * 42 * eb);
    }
    SECTION(std::string("broadcast ") + std::to_string(int(dt))) {
      // A row broadcast over rows (partition stride 0) and an element
      // broadcast along a row (free stride 0).
      checkCopy(hbm(0, dt, 0, 17, 33, {33}), hbm(0, dt, eb, 17, 0, {33}),
                64 * eb, 17 * 33 * eb);
      checkCopy(hbm(0, dt, 0, 17, 33, {33}), hbm(0, dt, 0, 17, 2, {33}, {0}),
                64 * eb, 17 * 33 * eb);
    }
    SECTION(std::string("split dims ") + std::to_string(int(dt))) {
      // dst [2, 96] contiguous rows; src [2 rows, 16, 6] heads-interleaved.
      checkCopy(hbm(0, dt, 0, 2, 96, {96}),
                hbm(0, dt, 0, 2, 200, {16, 6}, {1, 20}), 400 * eb, 192 * eb);
      // dst [6, 4] vs src [4, 6] with strides: counts that do not divide
      // fall back to the pairwise walk.
      checkCopy(hbm(0, dt, 0, 6, 5, {4}), hbm(0, dt, 0, 4, 7, {6}, {1}),
                28 * eb, 30 * eb);
    }
    SECTION(std::string("negative stride ") + std::to_string(int(dt))) {
      checkCopy(hbm(0, dt, 0, 5, 9, {9}),
                hbm(0, dt, 44 * eb, 5, -9, {9}, {-1}), 45 * eb, 45 * eb);
    }
  }
}

TEST_CASE("overlapping same-region copies keep the walk's order",
          "[sim][dma][fastpath]") {
  // SBUF -> SBUF tensor_copy shifted by one element within one partition:
  // the row is one run, moved like memmove.
  const int N = 50;
  Builder b;
  uint32_t in = b.input(DType::F32, N * 4);
  uint32_t out = b.output(DType::F32, N * 4);
  b.dma(sbuf(DType::F32, 0, 1, 0, {N}), hbm(in, DType::F32, 0, 1, N, {N}));
  Instruction c = make(Opcode::TensorCopy, Engine::Vector);
  c.dst = sbuf(DType::F32, 0, 1, 4, {N - 1});
  c.src0 = sbuf(DType::F32, 0, 1, 0, {N - 1});
  b.add(c);
  b.dma(hbm(out, DType::F32, 0, 1, N, {N}), sbuf(DType::F32, 0, 1, 0, {N}));
  std::vector<float> x(N), y(N);
  std::iota(x.begin(), x.end(), 1.0f);
  REQUIRE(run(b.p, {x.data()}, {y.data()}) == "");
  std::vector<float> want = x;
  std::memmove(&want[1], &x[0], (N - 1) * 4);
  CHECK(y == want);
}

TEST_CASE("scratch reads zeros wherever this run has not written",
          "[sim][scratch][fastpath]") {
  // Every program has one 256-byte f32 scratch region and copies all of it
  // to the output at the end; they differ in what they write first.
  const int N = 64;
  auto program = [&](auto writes) {
    Builder b;
    uint32_t in = b.input(DType::F32, N * 4);
    uint32_t scratch = b.region(Region::Kind::Scratch, DType::F32, N * 4);
    uint32_t out = b.output(DType::F32, N * 4);
    writes(b, in, scratch);
    b.dma(hbm(out, DType::F32, 0, 1, N, {N}),
          hbm(scratch, DType::F32, 0, 1, N, {N}));
    return b.p;
  };
  Program fill = program([&](Builder &b, uint32_t in, uint32_t s) {
    b.dma(hbm(s, DType::F32, 0, 1, N, {N}), hbm(in, DType::F32, 0, 1, N, {N}));
  });
  Program prefix = program([&](Builder &b, uint32_t in, uint32_t s) {
    // Two in-order writes of the first 16 + 16 elements.
    b.dma(hbm(s, DType::F32, 0, 1, 16, {16}), hbm(in, DType::F32, 0, 1, 16, {16}));
    b.dma(hbm(s, DType::F32, 64, 1, 16, {16}),
          hbm(in, DType::F32, 64, 1, 16, {16}));
  });
  Program gap = program([&](Builder &b, uint32_t in, uint32_t s) {
    b.dma(hbm(s, DType::F32, 128, 1, 16, {16}),
          hbm(in, DType::F32, 128, 1, 16, {16}));
  });
  Program strided = program([&](Builder &b, uint32_t in, uint32_t s) {
    b.dma(hbm(s, DType::F32, 0, 1, 2, {32}, {2}),
          hbm(in, DType::F32, 0, 1, 2, {32}, {2}));
  });
  Program readFirst = program([](Builder &, uint32_t, uint32_t) {});

  Simulator sim(*lookupMachineModel("trn2"));
  std::vector<float> x(N), y(N);
  std::iota(x.begin(), x.end(), 1.0f);
  auto runOn = [&](const Program &p) {
    std::fill(y.begin(), y.end(), -1.0f);
    REQUIRE(errorText(sim.run(p, {x.data()}, {y.data()})) == "");
  };
  for (int repeat = 0; repeat < 2; ++repeat) {
    runOn(fill);
    CHECK(y == x);
    runOn(prefix);
    for (int i = 0; i < N; ++i)
      REQUIRE(y[i] == (i < 32 ? x[i] : 0.0f));
    runOn(fill);
    runOn(gap);
    for (int i = 0; i < N; ++i)
      REQUIRE(y[i] == (i >= 32 && i < 48 ? x[i] : 0.0f));
    runOn(fill);
    runOn(strided);
    for (int i = 0; i < N; ++i)
      REQUIRE(y[i] == (i % 2 == 0 ? x[i] : 0.0f));
    runOn(fill);
    runOn(readFirst);
    CHECK(y == std::vector<float>(N, 0.0f));
  }
}

TEST_CASE("packed scratch regions keep each region's own zeros and data",
          "[sim][scratch][fastpath]") {
  // A lives first (input -> A -> output 0), then B (half written, all read:
  // output 1), then C (read before any write: output 2). After the first
  // run A, B and C share bytes; B's unwritten half and all of C must still
  // read as zeros, in timed and untimed runs alike.
  const int N = 64;
  Builder b;
  uint32_t in = b.input(DType::F32, N * 4);
  uint32_t ra = b.region(Region::Kind::Scratch, DType::F32, N * 4);
  uint32_t rb = b.region(Region::Kind::Scratch, DType::F32, N * 4);
  uint32_t rc = b.region(Region::Kind::Scratch, DType::F32, N * 4);
  uint32_t out0 = b.output(DType::F32, N * 4);
  uint32_t out1 = b.output(DType::F32, N * 4);
  uint32_t out2 = b.output(DType::F32, N * 4);
  auto all = [&](uint32_t r) { return hbm(r, DType::F32, 0, 1, N, {N}); };
  b.dma(all(ra), all(in));
  b.dma(all(out0), all(ra));
  b.dma(hbm(rb, DType::F32, 0, 1, N / 2, {N / 2}),
        hbm(in, DType::F32, 0, 1, N / 2, {N / 2}));
  b.dma(all(out1), all(rb));
  b.dma(all(out2), all(rc));

  Simulator sim(*lookupMachineModel("trn2"));
  std::vector<float> x(N), y0(N), y1(N), y2(N);
  for (int run = 0; run < 6; ++run) {
    std::iota(x.begin(), x.end(), float(run * 100 + 1));
    std::fill(y0.begin(), y0.end(), -1.0f);
    std::fill(y1.begin(), y1.end(), -1.0f);
    std::fill(y2.begin(), y2.end(), -1.0f);
    RunOptions options;
    options.timed = run % 3 == 1;
    Profile profile;
    REQUIRE(errorText(sim.run(b.p, {x.data()}, {y0.data(), y1.data(), y2.data()},
                              options, &profile)) == "");
    CHECK(y0 == x);
    for (int i = 0; i < N; ++i)
      REQUIRE(y1[i] == (i < N / 2 ? x[i] : 0.0f));
    CHECK(y2 == std::vector<float>(N, 0.0f));
  }
}
