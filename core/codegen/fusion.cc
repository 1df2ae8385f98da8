// Fusion planning: anchors, epilogue chains, materialized values (see fusion.h).
#include "codegen/fusion.h"

#include <algorithm>
#include <utility>

#include "codegen/heuristics.h"
#include "codegen/kernel.h"
#include "codegen/layout.h"

namespace drtriton::codegen {
std::vector<std::vector<NodeId>> Consumers(const Program& program) {
  std::vector<std::vector<NodeId>> users(program.values().size());
  for (size_t i = 0; i < program.nodes().size(); ++i)
    for (ValueId t : program.nodes()[i].tensors)
      if (t.valid()) users[t.index].push_back(NodeId{static_cast<int32_t>(i)});
  return users;
}

bool IsOutput(const Program& program, ValueId v) {
  const auto& outs = program.outputs();
  return std::find(outs.begin(), outs.end(), v) != outs.end();
}

namespace {

// The one node that reads `v` (once or as several of its arguments), or an invalid id where
// none or several do.
NodeId OnlyReader(const std::vector<std::vector<NodeId>>& users, ValueId v) {
  const auto& u = users[v.index];
  if (u.empty() || !std::all_of(u.begin(), u.end(), [&](NodeId n) { return n == u.front(); }))
    return {};
  return u.front();
}

// Whether `node` can extend an epilogue that starts at `start`: elementwise or channelwise, of
// start's shape and dtype, not computed by an earlier anchor's chain (`claimed`).
bool ExtendsEpilogue(const Program& program, const Node& node, ValueId start,
                     const std::vector<bool>& claimed) {
  const OpInfo& op = GetOp(node.op);
  return (op.has(kElementwise) || op.has(kChannelwise)) &&
         program.value(node.result).shape == program.value(start).shape &&
         program.value(node.result).dtype == program.value(start).dtype &&
         !claimed[node.result.index];
}

// Epilogue paths that leave a value by several readers join again within this many nodes
// (JoinOfReaders): x * sigmoid(x) is two.
constexpr size_t kMaxJoinNodes = 8;

// The node where every path out of `from` (read by several nodes) joins again, when the nodes
// on the way each extend the epilogue (ExtendsEpilogue) and read nothing else of the region
// that the program still needs: a hand-written swish, torch.sigmoid(x) * x, reads x twice
// (KernelBench L2 37, 59, 88), which ended the GEMM's epilogue at x, stored in float32 and
// read back.  Returns the join's result and adds the values between to `inner`; an invalid
// id where there is no such join.
ValueId JoinOfReaders(const Program& program, const std::vector<std::vector<NodeId>>& users,
                      ValueId from, ValueId start, const std::vector<bool>& claimed,
                      std::vector<ValueId>* inner) {
  std::vector<ValueId> region = {from};
  const auto in_region = [&](ValueId v) {
    return std::find(region.begin(), region.end(), v) != region.end();
  };
  const auto& nodes = program.nodes();
  for (size_t i = static_cast<size_t>(program.value(from).producer.index) + 1;
       i < nodes.size() && region.size() <= kMaxJoinNodes; ++i) {
    const Node& n = nodes[i];
    if (std::none_of(n.tensors.begin(), n.tensors.end(), in_region)) continue;
    if (!ExtendsEpilogue(program, n, start, claimed)) return {};
    region.push_back(n.result);
    bool joined = true;  // every value before the newest read inside the region alone
    for (size_t r = 0; r + 1 < region.size(); ++r) {
      if (IsOutput(program, region[r])) return {};
      for (NodeId u : users[region[r].index]) joined = joined && in_region(program.node(u).result);
    }
    if (!joined) continue;
    inner->insert(inner->end(), region.begin() + 1, region.end() - 1);
    return n.result;
  }
  return {};
}

// Follows same-shape elementwise and channelwise nodes from `start` (ExtendsEpilogue), one
// reader at a time or through readers that join again (JoinOfReaders); returns the last value
// of the chain (start itself when nothing can be fused).  `claimed` marks the values earlier
// anchors' chains compute: a chain stops before one, so that two anchors whose chains meet (a
// residual block's conv -> batch_norm and its shortcut's, added) leave the shared tail to the
// first, which reads the second's stored end.  Marks its own values.
ValueId EpilogueEnd(const Program& program, const std::vector<std::vector<NodeId>>& users,
                    ValueId start, std::vector<bool>* claimed) {
  ValueId end = start;
  while (!IsOutput(program, end)) {
    const NodeId next = OnlyReader(users, end);
    if (!next.valid()) {
      std::vector<ValueId> inner;
      const ValueId joined = JoinOfReaders(program, users, end, start, *claimed, &inner);
      if (!joined.valid()) break;
      for (ValueId v : inner) (*claimed)[v.index] = true;
      end = joined;
      (*claimed)[end.index] = true;
      continue;
    }
    const Node& node = program.node(next);
    if (!ExtendsEpilogue(program, node, start, *claimed)) break;
    end = node.result;
    (*claimed)[end.index] = true;
  }
  return end;
}

// The flip that a scan's kernel can store through: the only consumer of the scan's epilogue
// end `end` (not itself an output), reversing the scan dim and no other.  Absorbed, it costs
// the scan's store a mirrored address instead of a copy kernel reading and writing the whole
// tensor again (KernelBench L1 91, flip-cumsum-flip of 32768 x 32768: 4 GiB each way after
// the scan, whose own traffic is the same 8 GiB).  Flips of other dims too stay copies.
// Null when there is none.
const Node* ScanDimFlip(const Program& program, const std::vector<std::vector<NodeId>>& users,
                        const Node& scan, ValueId end) {
  const auto& u = users[end.index];
  if (IsOutput(program, end) || u.size() != 1) return nullptr;
  const Node& next = program.node(u.front());
  const int dim = NormDim(scan.attrs[0].i, program.value(scan.result).shape.size());
  return FlippedDims(program, next) == std::vector<int>{dim} ? &next : nullptr;
}

// Whether the rows a reduction's broadcast tail ends in are worth its kernel storing them: a
// program output is stored anyway.  Any other end would be written once and read back by each
// reader, where a reader computing it inline reads the reduction's input and the statistic
// instead: a hand-written variance, (x - mean) read by its square's sum and by the normalized
// output, stored 1 GB and read it twice more (16384 x 16384, beyond-dev task 1008: 0.23x
// torch.compile on the H100, h100-2026-12-07f), where recomputing reads x twice.  A
// contraction reader stores its computed operands itself where they enter many products.
bool RowsWorthStoring(const Program& program, const std::vector<std::vector<NodeId>>& users,
                      ValueId end) {
  if (IsOutput(program, end)) return true;
  const auto& readers = users[end.index];
  return std::any_of(readers.begin(), readers.end(), [&](NodeId n) {
    return AnchorKind(program, n) == GroupKind::kContraction;
  });
}

// The end of the chain through the elementwise node that reads a reduction's epilogue end
// `end` back over the reduced input's shape (fusion.h), or an invalid id.  The reduction keeps
// its reduced dims (same rank: each reduced dim 1, so the read broadcasts along exactly them),
// and its rows must fill the GPU without a split (heuristics.h ChooseReduceRows).
ValueId BroadcastBack(const Program& program, const std::vector<std::vector<NodeId>>& users,
                      const Node& reduction, ValueId end, std::vector<bool>* claimed) {
  const RowKind kind = GetOp(reduction.op).row;
  const bool reduces = kind == RowKind::kSum || kind == RowKind::kMean ||
                       kind == RowKind::kMax || kind == RowKind::kMin ||
                       kind == RowKind::kLogsumexp;
  const Shape& in = program.value(reduction.tensors[0]).shape;
  const Shape& kept = program.value(reduction.result).shape;
  if (!reduces || kept.size() != in.size() || kept == in || IsOutput(program, end)) return {};
  const NodeId reader = OnlyReader(users, end);
  if (!reader.valid()) return {};
  const Node& next = program.node(reader);
  if (!GetOp(next.op).has(kElementwise) || (*claimed)[next.result.index]) return {};
  const Value& written = program.value(next.result);
  if (written.shape != in || written.dtype != program.value(end).dtype) return {};
  if (!RowsStayWhole(in, kept)) return {};
  std::vector<bool> trial = *claimed;
  trial[next.result.index] = true;
  const ValueId chain_end = EpilogueEnd(program, users, next.result, &trial);
  if (!RowsWorthStoring(program, users, chain_end)) return {};
  *claimed = std::move(trial);
  return chain_end;
}

// A GEMM's (linear, matmul, bmm: not a convolution, whose tiles take other forms).
bool IsGemm(const Node& node) {
  const OpInfo& op = GetOp(node.op);
  return op.has(kContraction) && !op.has(kConv) && !op.has(kConvTranspose);
}

// Whether each of GEMM `anchor`'s tiles holds whole groups of the group norm `norm` that
// reads its (M, C) output (fusion.h Group::row_tail): a power of two of at most
// kPartialColumns channels a group, since every BLOCK_N is a multiple of those (the halved
// epilogue's halves too where a group has at most half of them), and rows enough that the GEMV
// path is never chosen.  Literal shapes only: the group's size is a constexpr of the kernel.
bool GroupsFitTiles(const Program& program, const Node& anchor, const Node& norm,
                    bool literal_shapes) {
  const Shape& shape = program.value(norm.result).shape;
  if (!IsGemm(anchor) || !literal_shapes || shape.size() != 2) return false;
  const int64_t size = NormGroupChannels(program, norm);
  return size >= 2 && size <= kPartialColumns && (size & (size - 1)) == 0 &&
         shape[0] > kNarrowAtMost;
}

// The row operator over the channels of contraction `anchor` whose epilogue ends at `end`
// (fusion.h Group::row_tail), or null: the only reader of `end` (not an output itself), one of
// the kinds a tile can compute across its columns, along ChannelAxis, over at most
// kRowTailMaxChannels channels and rows enough that the GEMV path is never chosen.  Or, with
// `partials` set (Group::row_tail_partials; literal shapes only), a reduction of a GEMM's
// wider rows.
const Node* RowTailOf(const Program& program, const std::vector<std::vector<NodeId>>& users,
                      const Node& anchor, ValueId end, const std::vector<bool>& claimed,
                      bool literal_shapes, bool* partials) {
  const int axis = ChannelAxis(program, anchor);
  const NodeId reader = OnlyReader(users, end);
  if (axis < 0 || IsOutput(program, end) || !reader.valid()) return nullptr;
  const Node& row = program.node(reader);
  const RowKind kind = GetOp(row.op).row;
  if (kind == RowKind::kGroupNorm) {
    *partials = false;
    return !claimed[row.result.index] && GroupsFitTiles(program, anchor, row, literal_shapes)
               ? &row
               : nullptr;
  }
  const bool fits = kind == RowKind::kSum || kind == RowKind::kMean || kind == RowKind::kMax ||
                    kind == RowKind::kMin || kind == RowKind::kLogsumexp ||
                    kind == RowKind::kSoftmax || kind == RowKind::kLogSoftmax;
  const Shape& shape = program.value(end).shape;
  if (!fits || claimed[row.result.index] || row.tensors.size() != 1 ||
      NormDim(row.attrs[0].i, shape.size()) != axis)
    return nullptr;
  const int64_t channels = shape[static_cast<size_t>(axis)];
  const int64_t rows = Product(shape) / channels;
  const bool reduction = kind != RowKind::kSoftmax && kind != RowKind::kLogSoftmax;
  *partials = channels > kRowTailMaxChannels && reduction && IsGemm(anchor) && literal_shapes;
  const bool sized =
      channels >= kRowTailMinChannels && (channels <= kRowTailMaxChannels || *partials);
  return sized && rows > kNarrowAtMost ? &row : nullptr;
}

}  // namespace

bool RowsStayWhole(const Shape& in, const Shape& kept) {
  // Reduced dims innermost: the one layout whose rows ChooseReduceRows may split.
  size_t first = 0;
  while (first < in.size() && kept[first] == in[first]) ++first;
  const bool trailing =
      std::all_of(kept.begin() + first, kept.end(), [](int64_t d) { return d == 1; });
  const int64_t rows = Product(kept);
  return ChooseReduceRows(rows, Product(in) / rows, 0, trailing).split <= 1;
}

int64_t NormGroupChannels(const Program& program, const Node& group_norm) {
  const OpInfo& op = GetOp(group_norm.op);
  const int64_t groups = group_norm.attrs[static_cast<size_t>(op.attr_index("num_groups"))].i;
  return program.value(group_norm.result).shape[1] / groups;
}

int ChannelAxis(const Program& program, const Node& contraction) {
  const OpInfo& op = GetOp(contraction.op);
  const size_t rank = program.value(contraction.result).shape.size();
  if (op.has(kConv) || op.has(kConvTranspose)) {
    const size_t in = program.value(contraction.tensors[0]).shape.size();
    const bool batched = in == static_cast<size_t>(op.spatial_dims) + 2;
    return batched && contraction.attrs[3].i == 1 ? 1 : -1;
  }
  if (!op.has(kContraction) || rank < 2) return -1;
  for (size_t t = 0; t < 2 && t < contraction.tensors.size(); ++t)
    if (program.value(contraction.tensors[t]).shape.size() < 2) return -1;  // a vector operand
  return static_cast<int>(rank) - 1;
}

const Node* LossLogSoftmax(const Program& program, const Node& loss) {
  if (GetOp(loss.op).row != RowKind::kNllLoss) return nullptr;
  const ValueId scores = loss.tensors[0];
  const NodeId producer = program.value(scores).producer;
  if (!producer.valid() || IsOutput(program, scores)) return nullptr;
  const Node& softmax = program.node(producer);
  if (GetOp(softmax.op).row != RowKind::kLogSoftmax) return nullptr;
  if (NormDim(softmax.attrs[0].i, program.value(scores).shape.size()) != 1) return nullptr;
  for (const Node& n : program.nodes()) {  // read by the loss alone
    if (&n == &loss) continue;
    for (ValueId t : n.tensors)
      if (t == scores) return nullptr;
  }
  return &softmax;
}

bool IsInlinable(const Program& program, NodeId node) {
  const OpInfo& op = GetOp(program.node(node).op);
  return op.has(kElementwise) || op.has(kLayout) || op.has(kChannelwise);
}

bool IsWindowSum(const Program& program, const Node& node) {
  const OpInfo& op = GetOp(node.op);
  if (!op.has(kConv) && !op.has(kConvTranspose)) return false;
  const Shape& in = program.value(node.tensors[0]).shape;
  const size_t lead = in.size() == static_cast<size_t>(op.spatial_dims) + 2 ? 1 : 0;
  const int64_t groups = node.attrs[3].i;
  return groups > 1 && in[lead] == groups;
}

int64_t OperandReuse(const Program& program, const Node& node, size_t operand) {
  const OpInfo& op = GetOp(node.op);
  const Shape& out = program.value(node.result).shape;
  int64_t elems = 1;
  for (int64_t d : out) elems *= d;
  if (op.has(kConv) || op.has(kConvTranspose)) {
    const Shape& w = program.value(node.tensors[1]).shape;
    const size_t nsp = static_cast<size_t>(op.spatial_dims);
    const std::vector<int64_t> stride = node.attrs[0].AsInts(nsp);
    int64_t taps = 1;
    for (size_t d = 0; d < nsp; ++d)
      taps *= op.has(kConvTranspose) ? CeilDiv(w[2 + d], stride[d]) : w[2 + d];
    const int64_t groups = node.attrs[3].i;
    const int64_t n = op.has(kConvTranspose) ? w[1] : w[0] / groups;
    const int64_t n_all = op.has(kConvTranspose) ? w[1] * groups : w[0];
    return operand == 0 ? n * taps : elems / n_all;
  }
  if (!op.has(kContraction) || out.empty()) return 1;
  // A (operand 0) meets each of the N columns; B each of the batch x M rows.
  return operand == 0 ? out.back() : elems / out.back();
}

bool ComputedInline(const Program& program, const std::vector<bool>& materialized, ValueId v) {
  if (materialized[v.index]) return false;
  const NodeId producer = program.value(v).producer;
  if (!producer.valid()) return false;
  const Node& node = program.node(producer);
  const OpInfo& op = GetOp(node.op);
  if (op.has(kElementwise) || op.has(kChannelwise)) return true;
  if (!op.has(kLayout)) return false;
  return std::any_of(node.tensors.begin(), node.tensors.end(), [&](ValueId t) {
    return t.valid() && ComputedInline(program, materialized, t);
  });
}

GroupKind AnchorKind(const Program& program, NodeId node) {
  const OpInfo& op = GetOp(program.node(node).op);
  if (op.has(kContraction) || op.has(kConv) || op.has(kConvTranspose))
    return GroupKind::kContraction;
  if (op.has(kPooling)) return GroupKind::kPool;
  return GroupKind::kRows;
}

namespace {

// Whether the training batch norm `norm` may take its statistics from the columns of the
// contraction `anchor` whose group stores norm's input (fusion.h Group::column_stats): a
// one-group, not transposed convolution or a 2-D GEMM, whose channels are the norm's (dim 1),
// over rows and elements enough (kColumnStatsMinRows, kColumnStatsMinElements).
bool ColumnStatsFit(const Program& program, const Node& anchor, const Node& norm) {
  const OpInfo& op = GetOp(anchor.op);
  if (GetOp(norm.op).row != RowKind::kBatchNorm || op.has(kConvTranspose)) return false;
  if (ChannelAxis(program, anchor) != 1 || IsWindowSum(program, anchor)) return false;
  const Shape& shape = program.value(anchor.result).shape;
  if (IsGemm(anchor) && shape.size() != 2) return false;
  int64_t rows = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != 1) rows *= shape[d];
  return rows > kColumnStatsMinRows && rows * shape[1] >= kColumnStatsMinElements;
}

// Marks each contraction group whose stored value a training batch norm reads (ColumnStatsFit)
// and that norm's group.
void PairColumnStats(const Program& program, std::vector<Group>& groups) {
  for (Group& norm : groups) {
    if (norm.kind != GroupKind::kRows || !norm.anchor.valid()) continue;
    const Node& bn = program.node(norm.anchor);
    if (GetOp(bn.op).row != RowKind::kBatchNorm || !bn.tensors[0].valid()) continue;
    for (Group& c : groups) {
      if (c.kind != GroupKind::kContraction || c.output != bn.tensors[0]) continue;
      if (c.row_tail.valid() || c.column_stats.valid()) break;
      if (!ColumnStatsFit(program, program.node(c.anchor), bn)) break;
      c.column_stats = norm.anchor;
      norm.stats_from_columns = true;
      break;
    }
  }
}

}  // namespace

FusionPlan PlanFusion(const Program& program, bool fuse_epilogue, bool literal_shapes,
                      bool column_stats) {
  const auto users = Consumers(program);
  FusionPlan plan;
  plan.materialized.assign(program.values().size(), false);
  for (ValueId in : program.inputs()) plan.materialized[in.index] = true;

  // (position of the stored value's producer, group): groups run in that order, which is
  // topological because an epilogue only reads values produced before its last node.
  std::vector<std::pair<int, Group>> ordered;
  std::vector<bool> covered(program.values().size(), false);  // stored by some group
  std::vector<bool> claimed(program.values().size(), false);  // in some anchor's epilogue
  // Producers another anchor computes in its own kernel (LossLogSoftmax): no group of their own.
  std::vector<NodeId> absorbed_by(program.nodes().size());
  if (fuse_epilogue)
    for (size_t i = 0; i < program.nodes().size(); ++i)
      if (const Node* softmax = LossLogSoftmax(program, program.nodes()[i]))
        absorbed_by[program.value(softmax->result).producer.index] =
            NodeId{static_cast<int32_t>(i)};
  for (size_t i = 0; i < program.nodes().size(); ++i) {
    const NodeId id{static_cast<int32_t>(i)};
    if (IsInlinable(program, id) || absorbed_by[i].valid()) continue;
    Group g;
    g.kind = AnchorKind(program, id);
    g.anchor = id;
    const Node& node = program.node(id);
    g.output = fuse_epilogue ? EpilogueEnd(program, users, node.result, &claimed) : node.result;
    const Node* flip = fuse_epilogue && GetOp(node.op).has(kScan)
                           ? ScanDimFlip(program, users, node, g.output)
                           : nullptr;
    if (flip) {
      g.output = EpilogueEnd(program, users, flip->result, &claimed);
      g.mirrored = true;
    }
    if (const Node* softmax = fuse_epilogue ? LossLogSoftmax(program, node) : nullptr)
      g.absorbed = program.value(softmax->result).producer;
    bool partials = false;
    if (const Node* row = fuse_epilogue && g.kind == GroupKind::kContraction
                              ? RowTailOf(program, users, node, g.output, claimed,
                                          literal_shapes, &partials)
                              : nullptr) {
      g.row_tail = program.value(row->result).producer;
      g.row_tail_partials = partials;
      absorbed_by[g.row_tail.index] = id;
      claimed[row->result.index] = true;
      g.output = EpilogueEnd(program, users, row->result, &claimed);
    }
    if (const ValueId rows = fuse_epilogue && g.kind == GroupKind::kRows
                                 ? BroadcastBack(program, users, node, g.output, &claimed)
                                 : ValueId{};
        rows.valid()) {
      g.output = rows;
      g.broadcast = true;
    }
    plan.materialized[g.output.index] = true;
    covered[g.output.index] = true;
    ordered.emplace_back(program.value(g.output).producer.index, g);
  }
  // A contraction's operands computed inline are stored by a kernel of their own where each
  // element enters more than kInlineOperandReuse products, and a window sum's always (fusion.h).
  for (size_t i = 0, anchors = ordered.size(); i < anchors; ++i) {
    const NodeId anchor = ordered[i].second.anchor;
    if (!anchor.valid() || AnchorKind(program, anchor) != GroupKind::kContraction) continue;
    const Node& node = program.node(anchor);
    for (size_t t = 0; t < 2 && t < node.tensors.size(); ++t) {
      const ValueId in = node.tensors[t];
      if (!in.valid() || !ComputedInline(program, plan.materialized, in)) continue;
      if (OperandReuse(program, node, t) <= kInlineOperandReuse && !IsWindowSum(program, node))
        continue;
      plan.materialized[in.index] = true;
      covered[in.index] = true;
      Group stored;
      stored.output = in;
      ordered.emplace_back(program.value(in).producer.index, stored);
    }
  }
  for (ValueId out : program.outputs()) {
    if (covered[out.index]) continue;
    covered[out.index] = true;
    plan.materialized[out.index] = true;
    Group g;
    g.output = out;
    const NodeId producer = program.value(out).producer;
    ordered.emplace_back(producer.valid() ? producer.index : -1, g);
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [pos, g] : ordered) plan.groups.push_back(g);
  if (fuse_epilogue && literal_shapes && column_stats) PairColumnStats(program, plan.groups);
  if (fuse_epilogue) AbsorbLeadingStats(program, plan);
  return plan;
}

std::string ColumnStatsBuffer(const Program& program, ValueId stored) {
  return program.value(stored).name + "_colstats";
}

}  // namespace drtriton::codegen
