"""trnc.nki kernels that follow the published NKI tutorials, for calibrating the simulator.

Written for trnc from the tutorials' descriptions of each version (not copied):

- matmul, NKI "Matrix multiplication" tutorial (trn1), result = lhsT.T @ rhs:
  ``matmul_tiled`` (one [128, 512] PSUM tile per output tile, both operands loaded
  for every k), ``matmul_hoist_load`` (the lhsT column of tiles loaded once per
  m, the rhs tiles once per (m, n)), ``matmul_block_free`` (2 x 2 output tiles per
  block reuse the loaded tiles), ``matmul_blocked`` (blocks over M, N and K, K
  outermost per N block, partial sums accumulated in SBUF, results packed into
  wide stores).
- attention, NKI "Fused self attention" tutorial (Stable Diffusion):
  ``attention`` computes softmax(q @ k.T) @ v for [seq, d] q, k, v one 128-row
  query tile at a time, the softmax on the Scalar/Vector engines in between.

``calibration.py`` simulates them at the tutorials' shapes; the tests run them
small against torch.
"""

from __future__ import annotations

import trnc.nki as nki
import trnc.nki.isa as nisa
import trnc.nki.language as nl

TILE_K = nl.tile_size.pmax  # 128
TILE_M = nl.tile_size.gemm_stationary_fmax  # 128
TILE_N = nl.tile_size.gemm_moving_fmax  # 512


@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                b = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nl.matmul(a, b, transpose_x=True)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                     value=nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def matmul_hoist_load(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TILE_M):
        lhs_col = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            lhs_col[k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        for n in nl.affine_range(N // TILE_N):
            rhs_col = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                rhs_col[k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                acc += nl.matmul(lhs_col[k], rhs_col[k], transpose_x=True)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                     value=nl.copy(acc, dtype=result.dtype))
    return result


def _column_tiles(src, first: int, count: int, width: int):
    """Tiles [count, K/128, par_dim(128), width] of columns first*width.. of src, all of K."""
    kt = src.shape[0] // TILE_K
    tiles = nl.ndarray((count, kt, nl.par_dim(TILE_K), width), dtype=src.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(count):
        col = (first + b) * width
        for k in nl.affine_range(kt):
            tiles[b, k] = nl.load(src[k * TILE_K:(k + 1) * TILE_K, col:col + width])
    return tiles


@nki.jit
def matmul_block_free(lhsT, rhs, tiles_m=2, tiles_n=2):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    block_m, block_n = TILE_M * tiles_m, TILE_N * tiles_n
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // block_m):
        lhs_tiles = _column_tiles(lhsT, m * tiles_m, tiles_m, TILE_M)
        for n in nl.affine_range(N // block_n):
            rhs_tiles = _column_tiles(rhs, n * tiles_n, tiles_n, TILE_N)
            for bm in nl.affine_range(tiles_m):
                for bn in nl.affine_range(tiles_n):
                    acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        acc += nl.matmul(lhs_tiles[bm, k], rhs_tiles[bn, k], transpose_x=True)
                    row, col = (m * tiles_m + bm) * TILE_M, (n * tiles_n + bn) * TILE_N
                    nl.store(result[row:row + TILE_M, col:col + TILE_N], value=nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def matmul_blocked(lhsT, rhs, tiles_m=16, tiles_n=2, tiles_k=8):
    K, M = lhsT.shape
    _, N = rhs.shape
    block_m, block_n, block_k = TILE_M * tiles_m, TILE_N * tiles_n, TILE_K * tiles_k
    nbm, nbn, nbk = M // block_m, N // block_n, K // block_k
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(nbn):
        # Partial sums of every output tile of this column block, kept in SBUF across K blocks.
        partial = nl.zeros((nbm, tiles_m, tiles_n, nl.par_dim(TILE_M), TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)
        for kb in nl.sequential_range(nbk):
            rhs_block = nl.ndarray((tiles_k, nl.par_dim(TILE_K), block_n), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(tiles_k):
                row = (kb * tiles_k + bk) * TILE_K
                rhs_block[bk] = nl.load(rhs[row:row + TILE_K, n * block_n:(n + 1) * block_n])
            for m in nl.affine_range(nbm):
                lhs_block = nl.ndarray((tiles_k, nl.par_dim(TILE_K), block_m), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(tiles_k):
                    row = (kb * tiles_k + bk) * TILE_K
                    lhs_block[bk] = nl.load(lhsT[row:row + TILE_K, m * block_m:(m + 1) * block_m])
                for bn in nl.affine_range(tiles_n):
                    for bm in nl.affine_range(tiles_m):
                        acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(tiles_k):
                            acc += nl.matmul(lhs_block[bk, :, bm * TILE_M:(bm + 1) * TILE_M],
                                             rhs_block[bk, :, bn * TILE_N:(bn + 1) * TILE_N], transpose_x=True)
                        partial[m, bm, bn] += acc
        for m in nl.affine_range(nbm):
            for bm in nl.affine_range(tiles_m):
                packed = nl.ndarray((TILE_M, block_n), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(tiles_n):
                    packed[:, bn * TILE_N:(bn + 1) * TILE_N] = nl.copy(partial[m, bm, bn])
                row = (m * tiles_m + bm) * TILE_M
                nl.store(result[row:row + TILE_M, n * block_n:(n + 1) * block_n], value=packed)
    return result


@nki.jit
def attention(q, k, v):
    """softmax(q @ k.T) @ v for q, k, v of [seq, d], d <= 128, seq a multiple of 512."""
    seq, d = q.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((seq, d), dtype=q.dtype, buffer=nl.shared_hbm)
    # k.T [d, seq] in SBUF (Tensor Engine transposes of 128-row tiles), v as [128, d] tiles.
    k_t = nl.ndarray((nl.par_dim(d), seq), dtype=q.dtype, buffer=nl.sbuf)
    v_tiles = []
    for j in nl.affine_range(seq // P):
        k_tile = nl.load(k[j * P:(j + 1) * P, :])
        k_t[:, j * P:(j + 1) * P] = nisa.nc_transpose(k_tile)
        v_tiles.append(nl.load(v[j * P:(j + 1) * P, :]))
    for i in nl.affine_range(seq // P):
        q_t = nl.ndarray((nl.par_dim(d), P), dtype=q.dtype, buffer=nl.sbuf)
        q_t[...] = nisa.nc_transpose(nl.load(q[i * P:(i + 1) * P, :]))
        # Scores of this query tile against every key, 512 keys per PSUM bank.
        scores = nl.ndarray((nl.par_dim(P), seq), dtype=nl.float32, buffer=nl.sbuf)
        for c in nl.affine_range(seq // TILE_N):
            part = nl.ndarray((P, TILE_N), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(part, q_t, k_t[:, c * TILE_N:(c + 1) * TILE_N])
            scores[:, c * TILE_N:(c + 1) * TILE_N] = nl.copy(part)
        neg_max = nisa.tensor_reduce(nl.max, scores, axis=1, keepdims=True, negate=True)
        probs = nl.ndarray((nl.par_dim(P), seq), dtype=q.dtype, buffer=nl.sbuf)
        nisa.activation(probs, nl.exp, scores, bias=neg_max)
        total = nl.sum(probs, axis=1, keepdims=True, dtype=nl.float32)
        inv = nl.reciprocal(total)
        # probs @ v: the probabilities transposed tile by tile (keys onto partitions).
        acc = nl.ndarray((P, d), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(seq // P):
            p_t = nl.ndarray((nl.par_dim(P), P), dtype=q.dtype, buffer=nl.sbuf)
            p_t[...] = nisa.nc_transpose(probs[:, j * P:(j + 1) * P])
            nisa.nc_matmul(acc, p_t, v_tiles[j])
        res = nl.multiply(acc, inv, dtype=q.dtype)
        nl.store(out[i * P:(i + 1) * P, :], value=res)
    return out
