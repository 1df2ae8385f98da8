// Layout operators beyond transpose: they move or select elements without arithmetic
// (FLOPs 0), so the teacher lowers each to index arithmetic inside the kernel that reads it.
// They come from real models through the frontend (views, flatten, channel shuffles, slices,
// concatenation as a sum of zero-padded parts); the synthesizer does not sample them
// (kFrontendOnly): a program of the paper's operators never needs one.  triu and tril
// keep a triangle and zero the rest: a masked read as well.
#include "catalog/entry_builder.h"

namespace drtriton::catalog_internal {
namespace {

AttrSpec FreeInt() {
  AttrSpec s;
  s.type = AttrType::kInt;
  s.domain = AttrDomain::kFree;
  return s;
}

Entry Layout(std::string name, std::string doc) {
  const std::string torch = "torch." + name;
  Entry e(std::move(name), torch, torch);
  e.Rank(1, 6).Traits(kLayout | kFrontendOnly).Flops(0).Doc(std::move(doc));
  return e;
}

}  // namespace

void AddLayoutOps(std::vector<OpInfo>& out) {
  // One operator for every view that keeps the element order: view, flatten, unflatten,
  // squeeze and unsqueeze are all reshapes of a contiguous tensor.
  out.push_back(
      Layout("reshape", "the same elements in row-major order, another shape (-1: inferred)")
          .Params({Tensor("input"), Attr("shape", IntListAttr())})
          .Rule(ShapeRule::kReshape)
          .Rank(0, 8)  // 0-d in and out: one element (a reduction over every dim)
          .Example({{2, 3, 4}}, {L({6, -1})}));
  out.push_back(Layout("permute", "reorder the dims: out.shape[k] = input.shape[dims[k]]")
                    .Traits(kLayout | kFrontendOnly | kReordersDims)
                    .Params({Tensor("input"), Attr("dims", IntListAttr())})
                    .Rule(ShapeRule::kPermute)
                    .Example({{2, 3, 4}}, {L({2, 0, 1})}));
  // Tensor.expand's function spelling: size-1 dims repeat (a stride-0 view in PyTorch).
  out.push_back(Layout("broadcast_to", "repeat size-1 dims (and new leading ones) to `size`")
                    .Params({Tensor("input"), Attr("size", IntListAttr())})
                    .Rule(ShapeRule::kExpand)
                    .Example({{3, 1}}, {L({2, 3, 4})}));
  out.push_back(Layout("narrow", "input[..., start:start + length, ...] along dim")
                    .Params({Tensor("input"), Attr("dim", DimAttr()), Attr("start", FreeInt()),
                             Attr("length", FreeInt())})
                    .Rule(ShapeRule::kNarrow)
                    .Example({{2, 5, 4}}, {I(1), I(1), I(3)}));
  out.push_back(Layout("select", "input[..., index, ...]: dim removed")
                    .Params({Tensor("input"), Attr("dim", DimAttr()), Attr("index", FreeInt())})
                    .Rule(ShapeRule::kSelect)
                    .Rank(2, 6)
                    .Example({{2, 3, 4}}, {I(1), I(2)}));
  out.push_back(Layout("flip", "reverse the order of elements along each of dims")
                    .Params({Tensor("input"), Attr("dims", IntListAttr())})
                    .Rule(ShapeRule::kSameAsInput)
                    .Example({{2, 3, 4}}, {L({-1})}));
  // Triangles of the last two dims: the other elements read as zero (masked, no arithmetic).
  AttrSpec diagonal = FreeInt();
  diagonal.default_value = AttrValue::Int(0);
  out.push_back(Layout("triu", "zero below the diagonal of the last two dims (col - row < k)")
                    .Params({Tensor("input"), Attr("diagonal", diagonal)})
                    .Rule(ShapeRule::kSameAsInput)
                    .Rank(2, 6)
                    .Keeps(Triangle::kUpper)
                    .Example({{2, 4, 5}}, {I(1)}));
  out.push_back(Layout("tril", "zero above the diagonal of the last two dims (col - row > k)")
                    .Params({Tensor("input"), Attr("diagonal", diagonal)})
                    .Rule(ShapeRule::kSameAsInput)
                    .Rank(2, 6)
                    .Keeps(Triangle::kLower)
                    .Example({{2, 4, 5}}, {I(-1)}));
  // Rows picked by int64 indices: weight[input[...], :] (embedding lookups; the frontend
  // writes x[idx] and index_select along any dim as one, through reshapes and permutes of
  // the float tensors).  The kernel loads the index, then the row (codegen/expr.cc
  // EmitEmbedding); an index outside [-rows, rows) reads zeros, where PyTorch raises.
  out.push_back(Entry("embedding", "torch.nn.functional.embedding", "F.embedding")
                    .Params({IndexTensor("input", 0, 1), Tensor("weight")})
                    .Rule(ShapeRule::kEmbedding)
                    .Rank(1, 6)
                    .Traits(kLayout | kGather | kFrontendOnly)
                    .Flops(0)
                    .Doc("weight[input[...], :]: a row of the (rows, D) weight per int64 index")
                    .Example({{2, 3}, {5, 4}}, {}));
  // Constant padding only (the frontend builds reflect and replicate padding from narrow,
  // flip and cat); pad lists (before, after) pairs from the last dim backwards.
  out.push_back(Entry("pad", "torch.nn.functional.pad", "F.pad")
                    .Params({Tensor("input"), Attr("pad", IntListAttr()),
                             Attr("mode", StringChoices({"constant"}, "constant")),
                             Attr("value", FloatChoices({0.0}, 0.0))})
                    .Rule(ShapeRule::kPad)
                    .Rank(1, 6)
                    .Traits(kLayout | kFrontendOnly)
                    .Flops(0)
                    .Doc("surround with `value`: pad = (before, after) per dim, last dim first")
                    .Example({{2, 3, 4}}, {L({1, 2, 0, 1}), S("constant"), F(0.0)}));
}

}  // namespace drtriton::catalog_internal
