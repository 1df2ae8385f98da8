// Reductions over one dimension, softmax-like rows and scans.  FLOPs count per input
// element (docs/flops.md).
#include <string>
#include <utility>

#include "catalog/entry_builder.h"

namespace drtriton::catalog_internal {
namespace {

constexpr int kMaxReduceRank = 5;

// torch.<name>(input, dim, keepdim=False): drop or keep `dim`.
Entry Reduce(const std::string& name, uint32_t extra_traits, double flops, std::string doc) {
  Entry e(name, "torch." + name, "torch." + name);
  e.Params({Tensor("input"), Attr("dim", DimAttr()), Attr("keepdim", BoolAttr(false))})
      .Rule(ShapeRule::kReduce)
      .Rank(1, kMaxReduceRank)
      .Traits(kReduction | extra_traits)
      .Flops(flops)
      .Doc(std::move(doc))
      .Example({{2, 3, 4}}, {I(1), B(false)});
  return e;
}

// torch.<name>(input, dim): same shape, computed along `dim`.
Entry AlongDim(const std::string& name, uint32_t traits, double flops, std::string doc) {
  Entry e(name, "torch." + name, "torch." + name);
  e.Params({Tensor("input"), Attr("dim", DimAttr())})
      .Rule(ShapeRule::kSameAsInput)
      .Rank(1, kMaxReduceRank)
      .Traits(traits)
      .Flops(flops)
      .Doc(std::move(doc))
      .Example({{2, 3, 4}}, {I(-1)});
  return e;
}

}  // namespace

void AddReductionOps(std::vector<OpInfo>& out) {
  out.push_back(Reduce("sum", kAddsUpError, 1, "sum over dim").Row(RowKind::kSum));
  out.push_back(Reduce("mean", 0, 1, "mean over dim").Row(RowKind::kMean));
  out.push_back(Reduce("amax", 0, 1, "max over dim (values only)").Row(RowKind::kMax));
  out.push_back(Reduce("amin", 0, 1, "min over dim (values only)").Row(RowKind::kMin));
  // Frontend-only: a product of a synthesized program's dozens of randn values leaves
  // float32's range, which would make the synthesizer's programs all 0 or inf.
  out.push_back(Reduce("prod", kAmplifiesError | kFrontendOnly, 1, "product over dim")
                    .Row(RowKind::kProd));
  out.push_back(Reduce("argmax", kIndexResult, 1, "index of the max over dim, int64")
                    .Row(RowKind::kArgmax));
  out.push_back(Reduce("argmin", kIndexResult, 1, "index of the min over dim, int64")
                    .Row(RowKind::kArgmin));
  // Stable form: max, subtract, exp, add per input element.
  out.push_back(Reduce("logsumexp", 0, 4, "log(sum(exp(x))) over dim")
                    .Alias({"torch.special.logsumexp"})
                    .Row(RowKind::kLogsumexp));

  // max, subtract, exp, sum, divide (log_softmax: subtract the log) per element.
  out.push_back(AlongDim("softmax", kRowwise | kAmplifiesError, 5, "exp(x) / sum(exp(x)) along dim")
                    .Alias({"torch.nn.functional.softmax", "F.softmax", "torch.special.softmax"})
                    .Row(RowKind::kSoftmax));
  out.push_back(AlongDim("log_softmax", kRowwise | kAmplifiesError, 5, "x - logsumexp(x) along dim")
                    .Alias({"torch.nn.functional.log_softmax", "F.log_softmax",
                            "torch.special.log_softmax"})
                    .Row(RowKind::kLogSoftmax));
  // The loss of class scores: F.nll_loss(log_softmax(x, 1), target) is F.cross_entropy(x,
  // target).  Frontend-only: its target is int64 (Param::index_dim), and the synthesizer's
  // programs are float32 throughout.  Each row's loss is -input[i, target[i]], 0 where
  // target[i] == ignore_index; 'mean' divides the sum by the rows not ignored.  FLOPs: the
  // negation and the sum, per row.  No class weights (the frontend keeps a weighted loss in
  // PyTorch).
  out.push_back(Entry("nll_loss", "torch.nn.functional.nll_loss", "F.nll_loss")
                    .Params({Tensor("input"), IndexTensor("target", 1),
                             KeywordAttr("ignore_index", IntRange(-100, -100, -100)),
                             KeywordAttr("reduction",
                                         StringChoices({"mean", "sum", "none"}, "mean"))})
                    .Rule(ShapeRule::kClassLoss)
                    .Rank(2, 2)
                    .Traits(kGather | kFrontendOnly)
                    .Flops(2)
                    .Doc("-input[i, target[i]] per row of (N, C) scores, int64 targets; mean, sum "
                         "or none over the rows")
                    .Example({{4, 5}, {4}}, {I(-100), S("mean")})
                    .Row(RowKind::kNllLoss));
  out.push_back(AlongDim("cumsum", kScan | kAddsUpError, 1, "running sum along dim")
                    .Row(RowKind::kCumsum));
  out.push_back(AlongDim("cumprod", kScan | kAmplifiesError, 1, "running product along dim")
                    .Row(RowKind::kCumprod));
}

}  // namespace drtriton::catalog_internal
