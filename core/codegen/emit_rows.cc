// Rows kernels: reductions over one dim (sum, mean, amax, amin, argmax, argmin, logsumexp),
// softmax and log_softmax, cumsum and cumprod, and layer/group/instance norm (rows.h: the
// layout).  A program owns BLOCK_O rows and walks their reduced extent R in blocks of
// BLOCK_R lanes.  Each byte moves as few times as the operator allows:
// - A row that fits one block (heuristics.h: OnePassLimit) is read once: straight-line code
//   loads it, reduces it and, for softmax and norms, normalizes the same registers.
// - Longer rows: reductions and scans read them once, in one loop; softmax and norms take two
//   passes, running statistics (online softmax: a running max and a rescaled sum per lane;
//   Welford: a running mean and squared deviations per lane) and then the write.  The first
//   block stays in registers from the first pass to the second, so that in generic-shape
//   mode, where R is a runtime size, a row that fits one block is still read once (both
//   loops then run zero times).
// - Fewer rows than the GPU has room for (heuristics.h: RowsConfig::split), each several
//   blocks long: every row is cut into chunks, one program per (row, chunk); a statistics
//   kernel writes each chunk's partial statistics, and the kernel of the output combines
//   them (a handful of floats per row) before it reduces or writes its chunk.
// - Softmax and norms over rows of 64K elements or more (heuristics.h CooperativeRows): on a
//   GPU one cooperative kernel reads each one-block chunk once and writes it from registers
//   once the row's programs have exchanged their statistics (rows_coop.cc); elsewhere the
//   split pair above, with chunks of one block.
// - A contiguous input is addressed as row * R + r (`row_off + r`) under a CONTIG flag that
//   the wrapper sets, where the strided path would split r into several coordinates with a
//   division per element (a norm over (H, W)); outputs, allocated by the wrapper, always are.
// - Norm weights and biases vary per row (instance_norm: loaded once per row), along R
//   (layer_norm: one [1, BLOCK_R] load per block, shared by its rows) or per element
//   (group_norm: once per row and block when channels are whole blocks, else gathered).
// Files: this one (blocks, passes, stores, reductions, scans), rows_normalize.cc (softmax,
// norms), rows_split.cc (split rows), rows_coop.cc (cooperative rows), rows_stats.cc (online
// statistics), rows_layout.cc.
// Elementwise producers are recomputed inside every pass; elementwise consumers run before
// the store (epilogue).
// - A cumsum of a flip along its contiguous scan dim walks the row from its end, reading the
//   flip's input at increasing addresses (ScanInputFlip, OpenBlock, EmitScan): Triton
//   vectorizes no decreasing index, and the flip read as index arithmetic (n - 1 - r) cost
//   KernelBench L1 91 (flip-cumsum-flip, 32768 x 32768) 16 scalar loads, 1256 instructions
//   and 86 registers a thread in sm_90 against 4 vector loads, 512 and 53 for a plain cumsum.
//   A flip of a scan's result along the scan dim alone is the scan's store (fusion.h
//   Group::mirrored), so flip-cumsum-flip is one kernel.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/layout.h"
#include "codegen/rows_emitter.h"

namespace drtriton::codegen {
namespace {

// Reduced dims that are not 1: with two or more, a strided address divides per element.
int NonUnitDims(const Dims& dims) {
  int n = 0;
  for (const auto& d : dims) n += d != "1";
  return n;
}

}  // namespace

RowsEmitter::RowsEmitter(const GroupContext& ctx, const Node& node, Role role)
    : ctx_(ctx),
      role_(role),
      p_(ctx.program),
      node_(node),
      op_(RowOpOf(GetOp(node.op))),
      layout_(LayoutOf(ctx, node, op_)),
      params_(p_, ctx.allocated_strides()) {
  if (ctx.group.absorbed.valid()) absorbed_ = &p_.node(ctx.group.absorbed);
  for (const Group::LeadingStat& stat : ctx.group.leading_stats)
    leads_.push_back(&p_.node(stat.node));
  row_input_ = absorbed_ ? absorbed_->tensors[0] : node.tensors[0];
  rows_ = Product(layout_.row_shape);
  r_ = Product(layout_.r_shape);
  rows_expr_ = DimProduct(layout_.row_dims);
  r_expr_ = DimProduct(layout_.r_dims);
  // Batch norm over (N, C) (a linear's output: KernelBench L2 41, 97): a channel's samples are
  // C apart, so its rows are read as columns, adjacent channels a tile, where a row a program
  // read one element of each 32-byte sector (16384 x 4096 in L2 41).
  const bool columns = op_ == RowOp::kBatchNorm && !ctx.generic() && rows_ > 1 &&
                       Product(layout_.r_shape) == layout_.r_shape[0];
  strided_r_ = columns || (!IsNorm(op_) && ReducedDimStrided(ctx, row_input_, layout_));
  tiled_products_ = Products() && ctx.variant % 2 == 0 && ReducesInnermost();
  // Generic mode: block caps for a large problem (the wrapper shrinks the blocks to the
  // runtime sizes), and the loops, which run zero times past a row that fits.
  const int64_t rows_hint = ctx.generic() ? kUnknownSize : rows_;
  const int64_t r_hint = ctx.generic() ? kUnknownSize : r_;
  // Along an outer dim, operators whose statistics do not combine across chunks (argmax's first
  // index, a scan's carry) take ChooseRows' narrower tiles: more programs, each walking all of
  // R, where ChooseReduceRows' split (SplitFewStridedRows) would leave 64-row tiles unsplit (a
  // quarter of the programs).
  const bool unsplit_columns = !ReducesInnermost() && !Combinable() && rows_hint > 1;
  config_ = Sequential()      ? ChooseSequentialRows(rows_hint, ctx.variant)
            : unsplit_columns ? ChooseRows(rows_hint, r_hint, ctx.variant, /*r_inner=*/false)
                              : ChooseReduceRows(rows_hint, r_hint, ctx.variant,
                                                 ReducesInnermost());
  // A loss that reads one element a row (no log_softmax to compute): rows only, 1024 a program.
  if (op_ == RowOp::kNllLoss && !absorbed_) {
    config_.block_r = 1;
    config_.block_o = std::min<int64_t>(NextPow2(rows_), 1024);
    config_.launch.num_warps = 4;
  }
  // Rows written back through a reduction's epilogue are never split (fusion.cc BroadcastBack
  // keeps only rows that fill the GPU at variant 0's tiles).
  if (ctx.group.broadcast || !leads_.empty()) config_.split = 1;
  // Softmax and norms over long contiguous rows: one pass or 16K blocks below the cooperative
  // length (heuristics.h WidenRereadRows), one read of each chunk from it (rows_coop.cc).
  // Not group norm, whose wider blocks would cross channels and gather a weight per element
  // (4096-element blocks hold whole channels of KernelBench L1 35's layout), nor batch norm,
  // whose rows run across samples: neither was measured wide.
  if (TwoPasses() && !ctx.generic() && ReducesInnermost()) {
    if (op_ != RowOp::kGroupNorm && op_ != RowOp::kBatchNorm)
      WidenRereadRows(rows_, r_, ctx.variant, config_);
    CooperativeRows(r_, ctx.variant, config_);
  }
  // A reduction written back over its rows reads each row twice, three times with a leading
  // statistic (fusion.h): in one block the row stays in registers, as softmax's does.
  if ((Broadcasts() || !leads_.empty()) && !ctx.generic() && ReducesInnermost())
    WidenRereadRows(rows_, r_, ctx.variant, config_);
  // Statistics from a contraction's columns: the output kernel of a split row, never the
  // cooperative one (its statistics come from the input), one chunk where the row is not split.
  if (FromColumns()) {
    config_.cooperative = false;
    if (config_.split <= 1) {
      config_.split = 1;
      config_.chunk = CeilDiv(r_, config_.block_r) * config_.block_r;
    }
  }
  single_ = !ctx.generic() && r_ <= config_.block_r && !FromColumns();
  contiguous_ = (layout_.trailing || layout_.channel_rows) && NonUnitDims(layout_.r_dims) >= 2;
  if (GetOp(node.op).has(kScan)) {
    scan_dim_ = NormDim(node.attrs[0].i, p_.value(node.tensors[0]).shape.size());
    input_flip_ = ScanInputFlip();
  }
}

// The flip along the scan dim (and maybe others) that produces a cumsum's input, where
// walking from the row's end pays: the scan dim is contiguous and a block holds whole groups.
// Along another dim the loads are vectors across rows whatever the order of r, and cumprod
// reads one element a row at a time: both read the flip as index arithmetic.  Flips have
// literal sizes only (sizes.cc GenericBlocker), as have the mirrored indices.
const Node* RowsEmitter::ScanInputFlip() const {
  if (Products() || !layout_.trailing || config_.block_r < kGroup) return nullptr;
  const NodeId producer = p_.value(node_.tensors[0]).producer;
  if (!producer.valid()) return nullptr;
  const Node& flip = p_.node(producer);
  const std::vector<int> dims = FlippedDims(p_, flip);
  return std::find(dims.begin(), dims.end(), scan_dim_) != dims.end() ? &flip : nullptr;
}

std::string RowsEmitter::Schedule() const {
  if (op_ == RowOp::kNllLoss) {
    std::string how = !absorbed_ ? "the target's element of each row"
                      : single_  ? "one block, log_softmax's statistics and the target's score"
                                 : "one pass, log_softmax's statistics and the target's score";
    return ReducesRows() ? how + ", a partial sum a program" : how;
  }
  const std::string chunks = IntLiteral(config_.split) + " chunks of " + IntLiteral(config_.chunk);
  if (role_ == Role::kStats) return "partial statistics of " + chunks;
  if (role_ == Role::kCoop)
    return "cooperative, " + chunks + ": each chunk read once, the row's programs waiting for "
           "each other's statistics";
  if (role_ == Role::kWrite && FromColumns())
    return "statistics from the contraction's columns, written in " + chunks;
  if (role_ == Role::kWrite) return "from the partial statistics of " + chunks;
  if (Reversed()) return single_ ? "one block, reversed" : "one pass from the row's end";
  if (Broadcasts())
    return single_ ? "one block, written back over the row"
                   : "two passes: the reduction, then the rows written back";
  if (!TwoPasses()) return single_ ? "one block" : "one pass";
  if (single_) return "one pass, the row in registers";
  if (ctx_.generic()) return "one pass when the row fits BLOCK_R, else statistics then write";
  return "two passes: statistics, then write";
}

void RowsEmitter::WritePrologue() {
  w_.Line("pid = " + ProgramId(0, ctx_.wide));
  if (role_ == Role::kCoop) {
    OpenItemLoop();
  } else if (PerChunk()) {
    // Chunk-major: the programs of one chunk of every row run side by side, so a value of R's
    // shape (layer_norm's weight and bias, 32 MB in KernelBench L1 40) is read from HBM once
    // and from L2 by the other rows; row-major, each row's programs read all of it again a
    // row's worth of programs later. H200, L1 40's split (benchmarks/split_rows_probe.py):
    // 0.2816 ms row-major, 0.2505 chunk-major at 16 warps, 128 chunks a row.
    const std::string row_blocks = IntLiteral(CeilDiv(rows_, config_.block_o));
    w_.Line("chunk = pid // " + row_blocks);
    w_.Line("rows = pid % " + row_blocks + " * BLOCK_O + tl.arange(0, BLOCK_O)[:, None]");
    w_.Line("start = chunk * " + IntLiteral(config_.chunk));
  } else {
    w_.Line("rows = pid * BLOCK_O + tl.arange(0, BLOCK_O)[:, None]");
  }
  w_.Line("row_mask = rows < " + params_.Sizes(rows_expr_));
  row_ = DecomposeDims(w_, "rows", layout_.row_dims, "rc");
  const bool stores_rows = !IsReduction(op_) || Broadcasts();
  if (layout_.trailing && (contiguous_ || stores_rows) && op_ != RowOp::kNllLoss)
    w_.Line("row_off = rows * " + Atom(R()));
}

// A channel row's element r in a contiguous (N, C, spatial...) tensor: the sample r // S, the
// position r % S of its channel's run of S.  Two integer operations an element where the
// coordinates take one per dim (and a stride multiply each).
std::string RowsEmitter::ChannelRowsFlat() {
  const std::string spatial = params_.Sizes(DimProduct(layout_.r_dims, 1));
  const std::string channels = params_.Sizes(layout_.row_dims[0]);
  const std::string plane = ctx_.generic() ? Atom(channels) + " * " + Atom(spatial)
                                           : IntLiteral(rows_ * (r_ / layout_.r_shape[0]));
  return "(r // " + Atom(spatial) + ") * " + Atom(plane) + " + rows * " + Atom(spatial) +
         " + r % " + Atom(spatial);
}

EmittedKernel RowsEmitter::Emit() {
  if (role_ == Role::kTotal) return EmitLossTotal();
  r_coords_ = InlineCoords("r", layout_.r_dims);
  WritePrologue();
  in_coords_ = layout_.in_coords(row_, r_coords_);
  if (contiguous_ && layout_.channel_rows) {
    params_.AddContiguousRead(in_coords_, ChannelRowsFlat(), p_.value(row_input_).shape);
  } else if (contiguous_) {
    const Shape& in_shape = p_.value(row_input_).shape;
    params_.AddContiguousRead(in_coords_, "row_off + r", in_shape);
    // Values of R's shape (the input's trailing dims): layer_norm's weight.
    const size_t r_rank = std::min(r_coords_.size(), in_shape.size());
    params_.AddContiguousRead(r_coords_, "r", Shape(in_shape.end() - r_rank, in_shape.end()));
  }
  if (role_ == Role::kStats)
    EmitPartials();
  else
    EmitOp();
  if (role_ == Role::kCoop) CloseItemLoop();

  std::vector<std::string> constexprs = {"BLOCK_O", "BLOCK_R"};
  const std::string check = ContiguityCheck(p_, params_.flat_values());
  if (!check.empty()) constexprs.push_back("CONTIG");
  if (op_ == RowOp::kCumprod) constexprs.push_back("F64_CARRY");
  std::string name = ctx_.kernel_name;
  if (role_ == Role::kStats) name.insert(name.rfind("_kernel"), "_stats");
  if (role_ == Role::kCoop) name.insert(name.rfind("_kernel"), "_coop");
  if (ReducesRows()) name.insert(name.rfind("_kernel"), "_rows");
  EmittedKernel k = Launch(name, constexprs);
  if (!check.empty()) SetContiguityFlag(k, check);
  // EmitScan: torch's accumulator type on the inputs' device.  The CPU's is float64; any other
  // device gets the GPU's float32, meta tensors too (benchmarks/occupancy_audit.py builds the
  // kernel the H200 runs from them), as the pooling strips choose (SetStripLaunch).
  if (op_ == RowOp::kCumprod) {
    const std::string device = InputDevice(p_);
    k.constexprs.push_back(std::string("F64_CARRY=") +
                           (device == "'cuda'" ? "False" : device + ".type == \"cpu\""));
  }
  if (ReducesRows())  // a partial sum (and a count, for the mean) per program
    k.setup.insert(k.setup.begin(), ScratchAllocation(p_, PartialsBuffer(), 2 * LossPrograms()));
  // The partials: allocated by the statistics kernel, or by the cooperative kernel beside it,
  // whose setup always runs (its launch alone is guarded).
  if (role_ == (Cooperates() ? Role::kCoop : Role::kStats)) {
    const int64_t floats = rows_ * config_.split * PartialsPerChunk();
    k.setup.insert(k.setup.begin(), ScratchAllocation(p_, PartialsBuffer(), floats));
  }
  if (role_ == Role::kCoop) SetCoopLaunch(k);
  return k;
}

EmittedKernel RowsEmitter::Launch(const std::string& name, std::vector<std::string> constexprs) {
  EmittedKernel k;
  k.name = name;
  k.text = KernelText(
      k.name,
      GetOp(node_.op).name + " over " + r_expr_ + " of " + rows_expr_ + " rows: " + Schedule(),
      params_, constexprs, w_.str());
  k.call_args = params_.args();
  k.launch = config_.launch;
  // A split reduction's output kernel sums at most a few hundred partials per row.
  if (role_ == Role::kWrite && !PerChunk()) k.launch.num_warps = 1;
  if (!ctx_.generic()) {
    k.constexprs = {"BLOCK_O=" + IntLiteral(config_.block_o),
                    "BLOCK_R=" + IntLiteral(config_.block_r)};
    const int64_t programs = PerChunk() ? rows_ * config_.split : rows_;
    k.grid = Grid1D(IntLiteral(programs), IntLiteral(config_.block_o));
    return k;
  }
  // Blocks no larger than the runtime row (and row count), capped at the tile.
  const std::string cap_r = IntLiteral(config_.block_r);
  const std::string cap_o =
      ReducesInnermost() && !Sequential() ? cap_r + " // BLOCK_R" : IntLiteral(config_.block_o);
  k.setup = {"BLOCK_R = min(triton.next_power_of_2(" + r_expr_ + "), " + cap_r + ")",
             "BLOCK_O = min(triton.next_power_of_2(" + rows_expr_ + "), " + cap_o + ")"};
  k.constexprs = {"BLOCK_O=BLOCK_O", "BLOCK_R=BLOCK_R"};
  k.grid = Grid1D(rows_expr_, "BLOCK_O");
  return k;
}

std::string RowsEmitter::OpenBlock(const std::string& start) {
  const std::string lanes = Arange("BLOCK_R", ctx_.wide) + "[None, :]";
  if (Reversed()) {
    // The block's groups of kGroup lanes from its end, each group in increasing order of r:
    // 16-byte loads (EmitScan reverses the groups in registers).  The group's start is written
    // (BLOCK_R // 4 - 1 - lane // 4) * 4: as (BLOCK_R - 4 - lane // 4 * 4), the same value,
    // L1 91's kernel took 83 registers in sm_90 against 52.
    const std::string group = IntLiteral(kGroup);
    w_.Line("lane = " + lanes);
    w_.Line("r = " + (start == "0" ? "" : start + " + ") + "(BLOCK_R // " + group +
            " - 1 - lane // " + group + ") * " + group + " + lane % " + group);
  } else {
    w_.Line("r = " + (start == "0" ? lanes : start + " + " + lanes));
  }
  w_.Line("mask = row_mask & (r < " + R() + ")");
  block_start_ = start;
  if (!std::exchange(keep_block_, false)) scope_ = NewScope("mask", "(rows + r) * 0");
  return ReadInput();
}

// Walking from the row's end, the lane at r holds the scan's input at n - 1 - r, which is the
// flip's input at r along the scan dim (the flip's other dims read as the flip says).
std::string RowsEmitter::ReadInput() {
  if (block_read_.valid()) return scope_->Emit(block_read_, in_coords_);
  if (!Reversed()) return scope_->Emit(row_input_, in_coords_);
  Coords coords = LayoutInputCoords(p_, *input_flip_, in_coords_).coords;
  coords[scan_dim_] = in_coords_[scan_dim_];
  return scope_->Emit(input_flip_->tensors[0], coords);
}

void RowsEmitter::ForEachBlock(const std::string& from,
                               const std::function<void(const std::string&)>& body) {
  if (Split()) {  // the blocks of this program's chunk (the last chunk's tail is masked)
    const std::string chunk = IntLiteral(config_.chunk);
    OpenLoop(w_, "r0", chunk, "BLOCK_R");
    body(OpenBlock("start + r0"));
    CloseLoop(w_, "r0", chunk, "BLOCK_R");
    return;
  }
  if (single_) {
    if (from == "0") body(OpenBlock("0"));
    return;
  }
  OpenLoop(w_, "r0", R(), "BLOCK_R", from);
  // From the row's end: the last block (masked past n) first; blocks start at multiples of
  // BLOCK_R, so the loads stay aligned.
  body(OpenBlock(Reversed() ? IntLiteral(r_ - 1) + " // BLOCK_R * BLOCK_R - r0" : "r0"));
  CloseLoop(w_, "r0", R(), "BLOCK_R");
}

std::string RowsEmitter::ReopenFirstBlock() {
  if (!single_) {
    w_.Line("r = " + Arange("BLOCK_R", ctx_.wide) + "[None, :]");
    w_.Line("mask = row_mask & (r < " + R() + ")");
    block_start_ = "0";
    scope_ = std::move(first_);
  }
  return first_x_;
}

// The write pass of a looped row walks its blocks from the row's end back to the first, whose
// values are still in registers: the statistics pass read the row's last blocks most recently,
// so they are the ones L2 may still hold.  A program's share of the H200's 50 MB L2 is 190-380
// KB (one or two programs an SM), a quarter to an eighth of KernelBench L1 23's 1.5 MB rows.
void RowsEmitter::WriteBlocks(const std::function<void(const std::string&)>& write) {
  if (role_ == Role::kCoop) return write(first_x_);  // the chunk, still in registers
  if (Split()) return ForEachBlock("0", write);
  if (!single_) {  // rb: the block's start, from the last block's down to BLOCK_R
    const std::string end = ctx_.generic()
                                ? "(" + R() + " - 1) // BLOCK_R * BLOCK_R + BLOCK_R"
                                : IntLiteral(CeilDiv(r_, config_.block_r) * config_.block_r);
    OpenLoop(w_, "r0", R(), "BLOCK_R", "BLOCK_R");
    w_.Line("rb = " + end + " - r0");
    write(OpenBlock("rb"));
    CloseLoop(w_, "r0", R(), "BLOCK_R");
  }
  write(ReopenFirstBlock());
}

namespace {

std::string IdentityOf(const std::string& kind) {
  return kind == "max" ? kMinusInf : kind == "min" ? "float('inf')" : "0.0";
}

// `acc` combined with `v` where the block's mask holds.
std::string CombineLine(const std::string& acc, const std::string& v, const std::string& kind,
                        bool propagate_nan) {
  const std::string masked = "tl.where(mask, " + v + ", " + IdentityOf(kind) + ")";
  if (kind == "max" && propagate_nan) return acc + " = " + NanMax(acc, masked);
  if (kind == "min" && propagate_nan) return acc + " = " + NanMin(acc, masked);
  if (kind == "max" || kind == "min")
    return acc + " = tl." + (kind == "max" ? "maximum" : "minimum") + "(" + acc + ", " + masked +
           ")";
  return acc + " += " + masked;
}

// The lanes of `acc` reduced to one value a row.
std::string LanesReduced(const std::string& acc, const std::string& kind, bool propagate_nan) {
  std::string reduced = "tl." + kind + "(" + acc + ", axis=1, keep_dims=True)";
  if (propagate_nan && (kind == "max" || kind == "min")) reduced += " + " + NanOfLanes(acc);
  return reduced;
}

}  // namespace

// acc = combine(acc, where(mask, f(x), identity)) over R, then reduce to `name`.
// `propagate_nan`: a NaN in the row makes a max/min NaN (torch.amax/amin).
void RowsEmitter::Accumulate(const std::string& name, const std::string& f_of_x,
                             const std::string& kind, bool propagate_nan) {
  w_.Line("acc = tl.full([BLOCK_O, BLOCK_R], " + IdentityOf(kind) + ", dtype=tl.float32)");
  ForEachBlock("0", [&](const std::string& x) {
    std::string v = f_of_x;
    for (size_t pos; (pos = v.find("{x}")) != std::string::npos;) v.replace(pos, 3, x);
    w_.Line(CombineLine("acc", v, kind, propagate_nan));
  });
  w_.Line(name + " = " + LanesReduced("acc", kind, propagate_nan));
}

void RowsEmitter::ReduceRow(const std::string& name, const std::string& kind, bool propagate_nan) {
  if (role_ != Role::kWrite) return Accumulate(name, "{x}", kind, propagate_nan);
  LoadPartials({{name, IdentityOf(kind)}});
  w_.Line(name + " = " + LanesReduced("p_" + name, kind, propagate_nan));
}

// Stores the group's output at `address` (its `coords`), computing the epilogue from `val`.
void RowsEmitter::Store(const std::string& val, const Coords& coords, const std::string& mask,
                        const std::string& zero, const std::string& address) {
  ExprEmitter* e = scope_.get();
  std::unique_ptr<ExprEmitter> tail;
  // The epilogue reads under the store's mask: a reduction's rows, a scan's scanned order.
  if ((IsReduction(op_) && !Broadcasts()) || mask != "mask") {
    tail = NewScope(mask, zero);
    e = tail.get();
  }
  // Formulas use their inputs as atoms: bind a variable, never an expression.
  std::string var = val;
  if (val.find_first_of(" (") != std::string::npos) {
    var = "result";
    w_.Line(var + " = " + val);
  }
  e->Bind(node_.result, var);
  const std::string out = e->Compute(ctx_.group.output, coords);
  w_.Line("tl.store(" + address + ", " + out + ", mask=" + mask + ")");
}

// The output is allocated by the wrapper, so contiguous: one value per row at `rows`.
void RowsEmitter::StoreReduced(const std::string& val) {
  Store(val, layout_.out_coords(row_), "row_mask", "rows * 0",
        params_.Pointer(ctx_.group.output) + " + rows");
}

// The value at r is the anchor's result at r, stored at r, or, in a flipped output
// (Group::mirrored), at n - 1 - r.  Walking from the row's end, EmitScan puts the flipped
// output's values at r (the flips cancel); the unflipped result is StoreScanned's.
void RowsEmitter::StoreElements(const std::string& val) {
  const std::string zero = "(rows + r) * 0";
  const bool mirror = ctx_.group.mirrored && !Reversed();
  auto mirrored = [&](const std::string& c) { return "(" + IntLiteral(r_ - 1) + " - " + c + ")"; };
  Coords coords = in_coords_;
  if (mirror) coords[scan_dim_] = mirrored(coords[scan_dim_]);
  // The output is allocated by the wrapper, so contiguous: flat where the layout says how.
  const std::string out = params_.Pointer(ctx_.group.output);
  std::string address;
  if (layout_.trailing)
    address = out + " + row_off + " + (mirror ? mirrored("r") : "r");
  else if (layout_.channel_rows && contiguous_)
    address = out + " + " + ChannelRowsFlat();
  else
    address = params_.Address(ctx_.group.output, coords, zero);
  Store(val, coords, "mask", zero, address);
}

void RowsEmitter::EmitOp() {
  const std::string r = RCount();
  if (!leads_.empty()) EmitLeadingStats();
  if (Broadcasts()) return EmitReduceBroadcast();
  switch (op_) {
    case RowOp::kSum:
    case RowOp::kMean:
      ReduceRow("total", "sum", /*propagate_nan=*/false);
      StoreReduced(op_ == RowOp::kMean ? "total / " + r : "total");
      return;
    case RowOp::kMax:
    case RowOp::kMin:
      ReduceRow("result", op_ == RowOp::kMax ? "max" : "min", /*propagate_nan=*/true);
      StoreReduced("result");
      return;
    case RowOp::kProd:
      return EmitProd();
    case RowOp::kArgmax:
    case RowOp::kArgmin:
      return EmitArg(op_ == RowOp::kArgmax);
    case RowOp::kLogsumexp:
      return EmitLogsumexp();
    case RowOp::kSoftmax:
    case RowOp::kLogSoftmax:
      return EmitSoftmax(op_ == RowOp::kLogSoftmax);
    case RowOp::kCumsum:
    case RowOp::kCumprod:
      return EmitScan(op_ == RowOp::kCumprod);
    case RowOp::kLayerNorm:
    case RowOp::kGroupNorm:
    case RowOp::kInstanceNorm:
    case RowOp::kBatchNorm:
      return EmitNorm();
    case RowOp::kNllLoss:
      return EmitNllLoss();
    case RowOp::kNone:  // not a row operator: the dispatch never sends one here
      break;
  }
}

// The statistic into registers ([BLOCK_O, 1]), bound as the reduction's result by Store, then
// the epilogue at every element: a row of one block is still in scope_ (its loads reused), a
// longer one is read again block by block.
void RowsEmitter::EmitReduceBroadcast() {
  std::string value;
  switch (op_) {
    case RowOp::kSum:
    case RowOp::kMean:
      Accumulate("total", "{x}", "sum");
      value = op_ == RowOp::kMean ? "total / " + RCount() : "total";
      break;
    case RowOp::kMax:
    case RowOp::kMin:
      Accumulate("extreme", "{x}", op_ == RowOp::kMax ? "max" : "min", /*propagate_nan=*/true);
      value = "extreme";
      break;
    default:  // logsumexp
      MaxSumOfRow();
      value = "row_max + tl.log(row_sum)";
      break;
  }
  w_.Line("stat = " + value);
  if (single_) return StoreElements("stat");
  ForEachBlock("0", [&](const std::string&) { StoreElements("stat"); });
}

// The leading statistics (fusion.h), each from its own input (of the anchor input's shape, read
// at the block's coordinates), those of one pass accumulated together over the row; each later
// pass and the anchor's read the row again (from L2), or, when the row is one block, from the
// registers of this block, whose scope they keep.
void RowsEmitter::EmitLeadingStats() {
  const auto& stats = ctx_.group.leading_stats;
  int passes = 0;
  for (const Group::LeadingStat& s : stats) passes = std::max(passes, s.pass + 1);
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<size_t> now;
    for (size_t i = 0; i < stats.size(); ++i)
      if (stats[i].pass == pass) now.push_back(i);
    EmitLeadingPass(now);
  }
}

void RowsEmitter::EmitLeadingPass(const std::vector<size_t>& now) {
  std::vector<std::string> kinds(leads_.size());
  for (size_t i : now) {
    const RowKind row = GetOp(leads_[i]->op).row;
    kinds[i] = row == RowKind::kMax ? "max" : row == RowKind::kMin ? "min" : "sum";
    w_.Line("lead_acc" + std::to_string(i) + " = tl.full([BLOCK_O, BLOCK_R], " +
            IdentityOf(kinds[i]) + ", dtype=tl.float32)");
  }
  block_read_ = leads_[now.front()]->tensors[0];
  ForEachBlock("0", [&](const std::string& first) {
    for (size_t i : now) {
      const std::string x =
          i == now.front() ? first : scope_->Emit(leads_[i]->tensors[0], in_coords_);
      w_.Line(CombineLine("lead_acc" + std::to_string(i), x, kinds[i], kinds[i] != "sum"));
    }
  });
  block_read_ = ValueId{};
  // Each statistic's stored value: the reduction's, or its epilogue's end (the norm's sqrt),
  // computed from it one value a row (its reduced dim at 0, or the anchor result's coordinates).
  Coords keepdim = in_coords_;
  keepdim[static_cast<size_t>(NormDim(leads_[0]->attrs[0].i, keepdim.size()))] = "0";
  const std::unique_ptr<ExprEmitter> rows = NewScope("row_mask", "rows * 0");
  for (size_t i : now) {
    const std::string var = "lead" + std::to_string(i);
    std::string value = LanesReduced("lead_acc" + std::to_string(i), kinds[i], kinds[i] != "sum");
    if (GetOp(leads_[i]->op).row == RowKind::kMean) value = "(" + value + ") / " + RCount();
    w_.Line(var + " = " + value);
    rows->Bind(leads_[i]->result, var);
    const ValueId stored = ctx_.group.leading_stats[i].stored;
    const bool kept = p_.value(stored).shape.size() == keepdim.size();
    std::string end = rows->Compute(stored, kept ? keepdim : layout_.out_coords(row_));
    if (end.find_first_of(" (") != std::string::npos) {  // bound values are atoms
      w_.Line(var + "_end = " + end);
      end = var + "_end";
    }
    lead_values_.push_back({stored, end});
    if (single_) scope_->Bind(stored, end);
  }
  keep_block_ = single_;
}

// First index of the max (min) as torch does: the block's first extreme lane, kept
// across blocks only when a later block is strictly better.  A lane-wise variant (each lane's
// best value and first index over the blocks, one reduction after the loop, as amax does)
// was slower, not faster: KernelBench L1 52 (argmin over 4096 elements of stride 4095) ran
// 6.06 ms against 2.55 for this one on the H200 (h200-2026-12-03-d).  Its sm_90 SASS shows
// why: ptxas issues the block's 16 loads one at a time into one register, each consumed by
// the compare-and-select before the next is issued (one load in flight per thread), where
// this form's 16 loads go out together into 16 registers.  A lane-wise form needs the loads
// kept in flight (a prefetched next block, say) before it can pay.
void RowsEmitter::EmitArg(bool is_max) {
  const std::string worst = is_max ? kMinusInf : "float('inf')";
  const std::string red = is_max ? "max" : "min";
  const std::string n = ctx_.generic() ? Atom(R()) : IntLiteral(r_);
  w_.Line("best_v = tl.full([BLOCK_O, 1], " + worst + ", dtype=tl.float32)");
  w_.Line("best_i = tl.zeros([BLOCK_O, 1], dtype=tl.int32)");
  // torch ranks NaN above everything (argmax and argmin alike): the first NaN wins.  A
  // runtime size is added to zeros: tl.full takes a compile-time fill value.
  if (ctx_.generic())
    w_.Line("first_nan = tl.zeros([BLOCK_O, 1], dtype=tl.int32) + " + n);
  else
    w_.Line("first_nan = tl.full([BLOCK_O, 1], " + n + ", dtype=tl.int32)");
  ForEachBlock("0", [&](const std::string& read) {
    const std::string offset = block_start_ == "0" ? "" : " + " + block_start_;
    // A one-element input loads as a scalar (NewScope): made a tile of the block before the
    // mask meets it (the interpreter refused `mask & (x != x)` of a scalar x: a generic-shape
    // argmax over a (1, 1) amax, tiny-preset acceptance).
    const std::string x = "xb";
    w_.Line(x + " = tl.where(mask, " + read + ", 0.0)");
    w_.Line("is_nan = mask & (" + x + " != " + x + ")");
    w_.Line("first_nan = tl.minimum(first_nan, tl.min(tl.where(is_nan, r, " + n +
            "), axis=1, keep_dims=True))");
    w_.Line("xm = tl.where(mask & ~is_nan, " + x + ", " + worst + ")");
    w_.Line("blk_v = tl." + red + "(xm, axis=1, keep_dims=True)");
    w_.Line("blk_i = tl.arg" + red + "(xm, axis=1, tie_break_left=True, keep_dims=True)" + offset);
    w_.Line(std::string("better = blk_v ") + (is_max ? ">" : "<") + " best_v");
    w_.Line("best_i = tl.where(better, blk_i, best_i)");
    w_.Line("best_v = tl.where(better, blk_v, best_v)");
  });
  w_.Line("best_i = tl.where(first_nan < " + n + ", first_nan, best_i)");
  StoreReduced("best_i.to(tl.int64)");
}

// A running carry joins the blocks: cumsum adds it, cumprod multiplies by it; the last
// lane of each block's scan (masked lanes hold the identity) is the next carry.  cumprod's
// blocks are one element wide, so its product is sequential, as torch's, except along the
// contiguous dim in even variants (rows_emitter.h tiled_products_).
void RowsEmitter::EmitScan(bool is_prod) {
  const std::string identity = is_prod ? "1.0" : "0.0";
  // The running product is accumulated as torch's cumprod does on the inputs' device
  // (at::acc_type): in float64 on the CPU, each output rounded; in float32 on CUDA.  They
  // part where float32 leaves its range: a product that overflowed before a 0 is inf * 0 = NaN
  // in float32, 0 in float64.  Where that 0 is exact the verifier's float64 evaluation accepts
  // either, but where it is float32 rounding (a log_softmax's row maximum, -1e-20 in float64)
  // the float64 answer is beyond float32's range and only the device's own NaN is right: the
  // H200 rejected paper-preset program 54 (log_softmax -> cumprod along dim 0: 40-44k NaN of
  // the CUDA reference computed as 0) with the float64 product everywhere.  F64_CARRY is set
  // at launch from the inputs' device.
  const std::string carry_type = is_prod ? "tl.float64 if F64_CARRY else tl.float32" : "tl.float32";
  w_.Line("carry = tl.full([BLOCK_O, 1], " + identity + ", dtype=" + carry_type + ")");
  ForEachBlock("0", [&](const std::string& x) {
    w_.Line("xm = tl.where(mask, " + x + ", " + identity + ")");
    if (is_prod && Sequential()) {  // BLOCK_R is 1: the product is the output and the carry
      w_.Line("out = carry * xm.to(carry.dtype)");
      StoreElements("out.to(tl.float32)");
      if (!single_) w_.Line("carry = out");
      return;
    }
    // Walking from the row's end (a cumsum's only: products read no flip, ScanInputFlip), the
    // block is scanned in descending order of r (its groups reversed in registers); a flipped
    // output takes the result back in the order of r, an unflipped one as scanned.  A tiled
    // product's block is scanned by tl.cumprod, in the carry's dtype: scanned in float32 and
    // then widened, a block's partial products overflowed where the CPU's float64 prefix came
    // back into range (64 x 256 randn x 10, the verifier's scaled_10 set: 1-4 outputs +-inf
    // where torch's are finite, on every input seed).
    const std::string xs = Reversed() ? ReverseGroups("xm", "xs") : "xm";
    w_.Line(is_prod ? "out = tl.cumprod(" + xs + ".to(carry.dtype), axis=1) * carry"
                    : "out = tl.cumsum(" + xs + ", axis=1) + carry");
    if (!Reversed())
      StoreElements(is_prod ? "out.to(tl.float32)" : "out");
    else if (ctx_.group.mirrored)
      StoreElements(ReverseGroups("out", "res"));
    else
      StoreScanned("out");
    if (!single_) WriteLastLane("carry", "out");
  });
}

void RowsEmitter::WriteLastLane(const std::string& name, const std::string& x) {
  w_.Line("last = tl.arange(0, BLOCK_R)[None, :] == BLOCK_R - 1");
  w_.Line(name + " = tl.sum(tl.where(last, " + x + ", 0.0), axis=1, keep_dims=True)");
}

// The product of each row in float32, as torch.prod computes it on the CPU and the GPU.
// Sequential: one element a step, so that the rounding and where a partial product leaves
// float32's range follow the row (a tile's tree order overflows or underflows in other
// places); BLOCK_R is 1 and the running product is [BLOCK_O, 1], the reduced value's shape.
void RowsEmitter::EmitProd() {
  // Tiled: each lane's product over the blocks, then the lanes' (tl.cumprod's last lane:
  // Triton has no product reduction).
  const std::string lanes = Sequential() ? "1" : "BLOCK_R";
  w_.Line("acc = tl.full([BLOCK_O, " + lanes + "], 1.0, dtype=tl.float32)");
  ForEachBlock("0", [&](const std::string& x) { w_.Line("acc = acc * tl.where(mask, " + x + ", 1.0)"); });
  if (Sequential()) return StoreReduced("acc");
  WriteLastLane("result", "tl.cumprod(acc, axis=1)");
  StoreReduced("result");
}

// Walking from the row's end into an unflipped result (flip-cumsum): the j-th scanned lane,
// at r = start + BLOCK_R - 1 - j, holds the result at n - 1 - r = n - BLOCK_R - start + j,
// increasing in j: stored as scanned, in 16-byte stores, under a mask of its own (the lanes
// past the row's end come first, at negative positions).  Put back in the order of r, the
// values would land 16 bytes apart across a warp's lanes: 16 scalar stores a thread, each
// writing a quarter of the sectors it touches.  flip-cumsum at L1 91's shape in sm_90: 4
// stores, 488 instructions, 82 registers, against 16, 528 and 88 (loads and stores walking
// opposite ways cost the 30 registers over flip-cumsum-flip's 52).
void RowsEmitter::StoreScanned(const std::string& val) {
  const std::string start = block_start_ == "0" ? "" : " - " + Atom(block_start_);
  w_.Line("q = " + IntLiteral(r_) + " - BLOCK_R" + start + " + lane");
  Coords coords = in_coords_;
  coords[scan_dim_] = "q";
  Store(val, coords, "row_mask & (q >= 0)", "(rows + q) * 0",
        params_.Pointer(ctx_.group.output) + " + row_off + q");
}

// `x`'s groups of kGroup lanes, each reversed, as `name`: in the block OpenBlock reads walking
// from the row's end, the lanes in descending order of r.  Splits and joins of dims of 2 held
// by one thread rename registers (no instruction in sm_90: L1 91's scan has the plain
// cumsum's 512).  tl.cumsum(reverse=True) is no substitute: Triton 3.6 moves each value
// across the warp's lanes with 5 shuffles before the scan and 5 after (L1 91: 193 shuffles
// against 33, 656 instructions, 83 registers).
std::string RowsEmitter::ReverseGroups(const std::string& x, const std::string& name) {
  static_assert(kGroup == 4, "two splits into dims of 2");
  w_.Line("ev, od = tl.split(tl.reshape(" + x + ", [BLOCK_O, BLOCK_R // 4, 2, 2]))");
  w_.Line("ev0, ev1 = tl.split(ev)");  // lanes 0 and 2 of each group
  w_.Line("od0, od1 = tl.split(od)");  // lanes 1 and 3
  w_.Line(name + " = tl.reshape(tl.join(tl.join(od1, od0), tl.join(ev1, ev0)), " +
          "[BLOCK_O, BLOCK_R])");
  return name;
}

Result<EmittedKernel> EmitRows(const GroupContext& ctx) {
  const Node& node = ctx.program.node(ctx.group.anchor);
  RowsEmitter whole(ctx, node);
  if (whole.ReducesRows()) {  // the rows' partial sums, then their total
    EmittedKernel k = RowsEmitter(ctx, node, Role::kTotal).Emit();
    k.before.push_back(whole.Emit());
    return k;
  }
  if (!whole.Splits()) return whole.Emit();
  EmittedKernel k = RowsEmitter(ctx, node, Role::kWrite).Emit();
  if (whole.FromColumns()) {  // no statistics kernel: the contraction's, combined
    k.before.push_back(whole.EmitColumnStatsCombine());
    return k;
  }
  EmittedKernel stats = RowsEmitter(ctx, node, Role::kStats).Emit();
  if (whole.Cooperates()) {  // the split pair where the cooperative kernel cannot run
    EmittedKernel coop = RowsEmitter(ctx, node, Role::kCoop).Emit();
    k.guard = stats.guard = "not " + coop.guard;
    k.before.push_back(std::move(coop));
  }
  k.before.push_back(std::move(stats));
  return k;
}

}  // namespace drtriton::codegen
