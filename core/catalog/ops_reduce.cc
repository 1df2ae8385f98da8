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
  out.push_back(Reduce("sum", 0, 1, "sum over dim"));
  out.push_back(Reduce("mean", 0, 1, "mean over dim"));
  out.push_back(Reduce("amax", 0, 1, "max over dim (values only)"));
  out.push_back(Reduce("amin", 0, 1, "min over dim (values only)"));
  out.push_back(Reduce("argmax", kIndexResult, 1, "index of the max over dim, int64"));
  out.push_back(Reduce("argmin", kIndexResult, 1, "index of the min over dim, int64"));
  // Stable form: max, subtract, exp, add per input element.
  out.push_back(
      Reduce("logsumexp", 0, 4, "log(sum(exp(x))) over dim").Alias({"torch.special.logsumexp"}));

  // max, subtract, exp, sum, divide (log_softmax: subtract the log) per element.
  out.push_back(AlongDim("softmax", kRowwise, 5, "exp(x) / sum(exp(x)) along dim")
                    .Alias({"torch.nn.functional.softmax", "F.softmax", "torch.special.softmax"}));
  out.push_back(AlongDim("log_softmax", kRowwise, 5, "x - logsumexp(x) along dim")
                    .Alias({"torch.nn.functional.log_softmax", "F.log_softmax",
                            "torch.special.log_softmax"}));
  out.push_back(AlongDim("cumsum", kScan, 1, "running sum along dim"));
  out.push_back(AlongDim("cumprod", kScan, 1, "running product along dim"));
}

}  // namespace drtriton::catalog_internal
