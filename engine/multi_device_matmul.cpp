// Matmul of an engine over several devices (engine/multi_device.hpp says what runs where): row blocks of C and
// op(A) per device with B sent to each (whole, or in panels beside the products), and batches split by entries.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/extent.hpp"
#include "engine/multi_device.hpp"
#include "engine/parallel.hpp"
#include "engine/validate.hpp"

namespace tandem::detail {

// ---- matmul --------------------------------------------------------------------------------------

void Group::matmul(const MatmulCall& call) const {
  const bool batch = call.a.count > 1 || call.b.count > 1 || call.c.count > 1;
  if (!batch && call.m > 0 && call.n > 0) return matmul_rows(call);
  if (call.c.count > 1 && call.m > 0 && call.n > 0) return matmul_batches(call);
  // Empty products: on the first member.
  if (!call.c.in_buffer) return members_.front().matmul(call);
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  MatmulCall staged = call;
  staged.a = on_member(call.a, 0, keep), staged.b = on_member(call.b, 0, keep);
  staged.c = on_member(call.c, 0, keep);
  members_.front().matmul(staged);
  if (staged.c.allocation != nullptr) write_back(keep.back());
}

// Batch entries per member (host: even blocks, every member at once; Buffers: the entries whose C starts in
// the member's shard), each member's A, B and C entries staged there where they are not in place (a
// broadcast operand, count 1, whole on every member). Each entry is one engine's product: the same bits.
void Group::matmul_batches(const MatmulCall& call) const {
  const MatrixInput& c = call.c;
  const std::size_t D = members_.size(), count = c.count, ce = size_of(c.dtype);
  const std::vector<std::size_t> entries =
      bounds_by_shard(c.in_buffer ? c.allocation : nullptr, ce, c.offset, c.stride, count, D);
  auto part = [&](const MatrixInput& v, std::size_t d) {  // v's entries of member d
    if (v.count == 1) return v;
    MatrixInput x = shifted(v, entries[d] * v.stride);
    x.count = entries[d + 1] - entries[d];
    return x;
  };
  std::vector<MatmulCall> calls(D, call);
  for (std::size_t d = 0; d < D; ++d)
    calls[d].a = part(call.a, d), calls[d].b = part(call.b, d), calls[d].c = part(c, d);
  if (!c.in_buffer) {
    run_all(D, [&](std::size_t d) {
      if (entries[d] < entries[d + 1]) members_[d].matmul(calls[d]);
    });
    return;
  }
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  // C's entries interleaving (a permuted batch: its stride below one entry's elements): the extents staged for
  // two members share bytes, so each member is staged, run and written back before the next is staged.
  const std::size_t c_one = c.rows == 0 || c.cols == 0 ? 0 : (c.rows - 1) * c.ld + c.cols;
  if (c.stride < c_one) {
    for (std::size_t d = 0; d < D; ++d) {
      if (entries[d] == entries[d + 1]) continue;
      calls[d].a = on_member(calls[d].a, int(d), keep), calls[d].b = on_member(calls[d].b, int(d), keep);
      calls[d].c = on_member(calls[d].c, int(d), keep);
      members_[d].matmul(calls[d]);
      write_back(keep.back());
    }
    return;
  }
  std::vector<std::size_t> c_staged(D, SIZE_MAX);
  for (std::size_t d = 0; d < D; ++d) {
    if (entries[d] == entries[d + 1]) continue;
    calls[d].a = on_member(calls[d].a, int(d), keep), calls[d].b = on_member(calls[d].b, int(d), keep);
    calls[d].c = on_member(calls[d].c, int(d), keep);
    if (keep.back().copy) c_staged[d] = keep.size() - 1;
  }
  for (std::size_t d = 0; d < D; ++d)
    if (entries[d] < entries[d + 1]) members_[d].matmul(calls[d]);  // enqueued on the member's stream
  for (std::size_t d = 0; d < D; ++d)
    if (c_staged[d] != SIZE_MAX) write_back(keep[c_staged[d]]);
}

// Row blocks of C and op(A) per member; B whole on every member.
void Group::matmul_rows(const MatmulCall& call) const {
  const MatrixInput &a = call.a, &b = call.b, &c = call.c;
  const std::size_t m = call.m, k = call.k, D = members_.size();
  const std::size_t e = size_of(a.dtype), eb = size_of(b.dtype), ce = size_of(c.dtype);
  // Member d computes rows [rows[d], rows[d + 1]): even blocks for host matrices; for Buffers in
  // deterministic mode the rows that start in the member's shard of C, so that its block of C is in place;
  // otherwise a split by index (the rows of each shard of a Buffer of exactly C; staged where they are not
  // in place), so that which member computes a row, and with it the bits, never depends on the address.
  const std::vector<std::size_t> rows =
      c.in_buffer && !call.deterministic && split_by_index()
          ? bounds_by_index(c.ld, m, D)
          : bounds_by_shard(c.in_buffer ? c.allocation : nullptr, ce, c.offset, c.ld, m, D);
  // The member's share of the call: rows r0 .. r1 - 1 of op(A) and C.
  auto share = [&](std::size_t r0, std::size_t r1, const MatrixInput& ad, const MatrixInput& bd,
                   const MatrixInput& cd) {
    MatmulCall one = call;
    one.a = ad, one.b = bd, one.c = cd, one.m = r1 - r0;
    return one;
  };
  // op(A)'s rows r0 .. r1 - 1 and C's, as a sub-matrix at element `first` of the operand.
  auto a_rows = [&](std::size_t r0, std::size_t r1, std::size_t& first) {
    MatrixInput x = a;
    if (call.trans_a)
      first = r0, x.cols = r1 - r0;
    else
      first = r0 * a.ld, x.rows = r1 - r0;
    return x;
  };
  if (!c.in_buffer) {  // host: every member its rows, at once (host B goes up each member's own link)
    run_all(D, [&](std::size_t d) {
      if (rows[d] == rows[d + 1]) return;
      std::size_t first = 0;
      MatrixInput ad = a_rows(rows[d], rows[d + 1], first), cd = c;
      if (ad.data && k > 0) ad.data = static_cast<const char*>(a.data) + first * e;
      if (cd.data) cd.data = static_cast<const char*>(c.data) + rows[d] * c.ld * ce;
      cd.rows = rows[d + 1] - rows[d];
      members_[d].matmul(share(rows[d], rows[d + 1], ad, b, cd));
    });
    return;
  }
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  std::vector<std::size_t> c_staged(D, SIZE_MAX);
  std::vector<MatrixInput> ad(D), cd(D);
  for (std::size_t d = 0; d < D; ++d) {  // A's and C's rows (staging copies before B moves)
    if (rows[d] == rows[d + 1]) continue;
    std::size_t first_a = 0;
    MatrixInput x = a_rows(rows[d], rows[d + 1], first_a), y = c;
    y.rows = rows[d + 1] - rows[d];
    x.offset = a.offset + first_a, y.offset = c.offset + rows[d] * c.ld;
    ad[d] = on_member(x, int(d), keep);
    cd[d] = on_member(y, int(d), keep);
    if (keep.back().copy) c_staged[d] = keep.size() - 1;
  }
  const std::size_t b_bytes = extent_of(b) * eb;
  // Panels for float and double inputs only: with 16-bit inputs the products are so fast that the
  // transfers' kernels (NCCL's, which take SMs) cost them more than they save (bf16 16384^3 on 4 H200s:
  // 1.95x one GPU in panels against 2.81x after one broadcast; fp32: 3.73x against 3.59x).
  if (!call.deterministic && k > 0 && call.alpha != 0 && b_bytes > 0 && e >= 4 && eb >= 4) {
    matmul_panels(call, rows, ad, cd);
  } else {  // B on every member (one group of NCCL broadcasts, each from the member holding that piece), then
            // the products
    std::vector<std::shared_ptr<Allocation>> b_copies(D), b_views(D);
    std::vector<void*> dst(D);
    std::vector<Collectives::Piece> pieces;
    if (b_bytes > 0) {
      const std::size_t b0 = b.offset * eb;
      for (const Allocation::Shard& sh : b.allocation->shards()) {
        const auto [lo, hi] = bytes_in(sh, b0, b_bytes);
        if (lo < hi)
          pieces.push_back({sh.member, static_cast<const char*>(sh.mem->data()) + (lo - sh.first), lo - b0, hi - lo});
      }
      for (std::size_t d = 0; d < D; ++d) b_copies[d] = std::make_shared<Allocation>(members_[d].first(), b_bytes);
      for (std::size_t d = 0; d < D; ++d) dst[d] = b_copies[d]->data();
    }
    collectives_->broadcast(pieces, dst);
    for (std::size_t d = 0; d < D; ++d) {
      if (rows[d] == rows[d + 1]) continue;
      MatrixInput bd{b.dtype, dst[d], b.rows, b.cols, b.ld, true, nullptr, 0, b_bytes / eb};
      if (b_bytes > 0) {
        b_views[d] = std::make_shared<Allocation>(members_[d].first(), dst[d], b_bytes);
        bd.allocation = b_views[d].get();
      }
      members_[d].matmul(share(rows[d], rows[d + 1], ad[d], bd, cd[d]));  // enqueued on the member's stream
    }
  }
  for (std::size_t d = 0; d < D; ++d)
    if (c_staged[d] != SIZE_MAX) write_back(keep[c_staged[d]]);
}

// B in panels, sent beside the products (Buffers, not deterministic: the panels change the order of the
// sums). Panel j is the rows of stored B that a Buffer of exactly B holds in member j's shard (a split by
// index: the bits never depend on where B lies; held in place where they are): a range of K (op(B)'s rows) or,
// with trans_b, a range of C's columns. Member d takes the panels j = d, d + 1, ... in turn: the one in
// its own shard is read in place, each other comes in step s = j - d (mod D) of the transfers on the side
// streams (every member receives one panel per step, mostly from one other member), and the member's
// product of panel j waits for that step only. A range of K adds into C (beta 1 after the member's first
// panel); a range of C's columns is a product of its own.
void Group::matmul_panels(const MatmulCall& call, const std::vector<std::size_t>& rows,
                          const std::vector<MatrixInput>& ad, const std::vector<MatrixInput>& cd) const {
  const MatrixInput& b = call.b;
  const std::size_t D = members_.size(), e = size_of(b.dtype), b0 = b.offset * e, b_bytes = extent_of(b) * e;
  const std::vector<std::size_t> q = split_by_index() ? bounds_by_index(b.ld, b.rows, D)  // panel j: rows
                                                      : bounds_by_shard(b.allocation, e, b.offset, b.ld, b.rows, D);
  // Panel j's bytes [lo, hi) of B's extent, the shards' pieces of it, and whether member d holds it all.
  auto panel = [&](std::size_t j) {
    return std::pair{q[j] * b.ld * e, q[j + 1] == b.rows ? b_bytes : q[j + 1] * b.ld * e};
  };
  auto held_by = [&](std::size_t j, std::size_t d) -> const Allocation::Shard* {
    const auto [lo, hi] = panel(j);
    for (const Allocation::Shard& sh : b.allocation->shards())
      if (std::size_t(sh.member) == d && b0 + lo >= sh.first && b0 + hi <= sh.first + sh.mem->bytes()) return &sh;
    return nullptr;
  };
  std::vector<std::shared_ptr<Allocation>> copies(D), views(D);
  for (std::size_t d = 0; d < D; ++d)
    if (rows[d] < rows[d + 1]) {
      copies[d] = std::make_shared<Allocation>(members_[d].first(), b_bytes);
      views[d] = std::make_shared<Allocation>(members_[d].first(), copies[d]->data(), b_bytes);
    }
  JoinOnUnwind guard{*collectives_};  // (after copies and views: on an error it runs before they go)
  std::vector<std::size_t> step(D, SIZE_MAX);
  for (std::size_t s = 0; s < D; ++s) {
    std::vector<Collectives::Transfer> transfers;
    for (std::size_t d = 0; d < D; ++d) {
      const std::size_t j = (d + s) % D;
      if (!copies[d] || q[j] == q[j + 1] || held_by(j, d)) continue;
      const auto [lo, hi] = panel(j);
      for (const Allocation::Shard& sh : b.allocation->shards()) {
        const auto [x0, x1] = bytes_in(sh, b0 + lo, hi - lo);
        if (x0 < x1)
          transfers.push_back({sh.member, static_cast<const char*>(sh.mem->data()) + (x0 - sh.first), int(d),
                               static_cast<char*>(copies[d]->data()) + (x0 - b0), x1 - x0});
      }
    }
    if (!transfers.empty()) step[s] = collectives_->send_side(transfers);
  }
  for (std::size_t d = 0; d < D; ++d) {
    if (!copies[d]) continue;
    bool first = true;
    for (std::size_t s = 0; s < D; ++s) {
      const std::size_t j = (d + s) % D, p0 = q[j], p1 = q[j + 1];
      if (p0 == p1) continue;
      MatmulCall one = call;
      one.a = ad[d], one.c = cd[d], one.m = rows[d + 1] - rows[d];
      // Panel j of stored B: in place in the member's shard, or in its copy once step s is there.
      MatrixInput bj = b;
      bj.rows = p1 - p0;
      if (const Allocation::Shard* sh = held_by(j, d)) {
        bj.allocation = sh->mem.get(), bj.offset = (b0 + p0 * b.ld * e - sh->first) / e;
        bj.buffer_size = sh->mem->bytes() / e;
      } else {
        collectives_->wait_side(step[s], int(d));
        bj.allocation = views[d].get(), bj.offset = p0 * b.ld, bj.buffer_size = b_bytes / e;
      }
      bj.data = static_cast<const char*>(bj.allocation->data()) + bj.offset * e;
      one.b = bj;
      if (call.trans_b) {  // C's columns [p0, p1)
        one.n = p1 - p0;
        one.c.cols = p1 - p0, one.c.offset += p0;
      } else {  // K's range [p0, p1): op(A)'s columns
        one.k = p1 - p0;
        if (call.trans_a)
          one.a.rows = p1 - p0, one.a.offset += p0 * one.a.ld;
        else
          one.a.cols = p1 - p0, one.a.offset += p0;
        if (!first) one.beta = 1.0;
      }
      one.a.data = one.a.allocation
                       ? static_cast<const char*>(one.a.allocation->data()) + one.a.offset * size_of(one.a.dtype)
                       : nullptr;
      one.c.data = static_cast<const char*>(one.c.allocation->data()) + one.c.offset * size_of(one.c.dtype);
      first = false;
      members_[d].matmul(one);  // enqueued on the member's stream
    }
  }
  guard.armed = false;
  collectives_->join_side();  // (the sends end before anything later on a member's stream)
}

}  // namespace tandem::detail
