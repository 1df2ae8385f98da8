// Normalizations: output shape = input shape; running stats, weight and bias are (C,)
// or normalized_shape (AuxShape).  FLOPs per input element: 4 for batch_norm with running
// stats (subtract, scale, weight, bias), 8 for those that also compute mean and variance.
#include "catalog/entry_builder.h"

namespace drtriton::catalog_internal {
namespace {

AttrSpec Eps() { return FloatChoices({1e-5}, 1e-5); }
AttrSpec Momentum() { return FloatChoices({0.1}, 0.1); }

// An attribute written in every call: torch.batch_norm has no defaults.
AttrSpec Required(AttrSpec spec) {
  spec.default_value = AttrValue::None();
  return spec;
}

}  // namespace

void AddNormalizationOps(std::vector<OpInfo>& out) {
  // training=True would update the running stats in place, a side effect on program
  // inputs; the IR supports inference mode only.
  out.push_back(
      Entry("batch_norm", "torch.nn.functional.batch_norm", "F.batch_norm")
          .Params({Tensor("input"), Tensor("running_mean", AuxShape::kChannels),
                   PositiveTensor("running_var", AuxShape::kChannels),
                   OptionalTensor("weight", AuxShape::kChannels),
                   OptionalTensor("bias", AuxShape::kChannels),
                   Attr("training", FixedBoolAttr(false)), Attr("momentum", Momentum()),
                   Attr("eps", Eps())})
          .Rule(ShapeRule::kSameAsInput)
          .Rank(2, 5)
          .Traits(kNormalization | kChannelwise)
          .Flops(4)
          .Doc("(x - running_mean) / sqrt(running_var + eps) * weight + bias, per channel")
          .Example({{2, 3, 4, 4}, {3}, {3}, {3}, {3}}, {B(false), F(0.1), F(1e-5)}));
  // Batch norm in training mode (KernelBench's evaluation mode for every CNN): the batch's own
  // mean and biased variance per channel.  torch.batch_norm is F.batch_norm's ATen entry
  // (weight and bias before the running statistics); given running statistics it updates
  // them in place, as nn.BatchNorm does, which only a PyTorch line kept by a hybrid does: a
  // kernel computes the output alone (the verifier compares outputs; module state is not one).
  out.push_back(
      Entry("batch_norm_train", "torch.batch_norm", "torch.batch_norm")
          .Params({Tensor("input"), OptionalTensor("weight", AuxShape::kChannels),
                   OptionalTensor("bias", AuxShape::kChannels),
                   OptionalTensor("running_mean", AuxShape::kChannels),
                   PositiveOptionalTensor("running_var", AuxShape::kChannels),
                   Attr("training", Required(FixedBoolAttr(true))),
                   Attr("momentum", Required(Momentum())), Attr("eps", Required(Eps())),
                   Attr("cudnn_enabled", Required(FixedBoolAttr(true)))})
          .Rule(ShapeRule::kSameAsInput)
          .Rank(2, 5)
          .Traits(kNormalization)
          .Flops(8)
          .Doc("(x - mean) / sqrt(var + eps) * weight + bias, mean and biased var per channel "
               "over the batch and spatial dims")
          .Example({{2, 3, 4, 4}, {3}, {3}, {3}, {3}}, {B(true), F(0.1), F(1e-5), B(true)})
          .Row(RowKind::kBatchNorm));
  out.push_back(Entry("layer_norm", "torch.nn.functional.layer_norm", "F.layer_norm")
                    .Alias({"torch.layer_norm"})
                    .Params({Tensor("input"), Attr("normalized_shape", IntListAttr()),
                             OptionalTensor("weight", AuxShape::kNormalized),
                             OptionalTensor("bias", AuxShape::kNormalized), Attr("eps", Eps())})
                    .Rule(ShapeRule::kSameAsInput)
                    .Rank(1, 5)
                    .Traits(kNormalization)
                    .Flops(8)
                    .Doc("normalize over the trailing normalized_shape dims, then weight and bias")
                    .Example({{2, 3, 4}, {4}, {4}}, {L({4}), F(1e-5)})
                    .Row(RowKind::kLayerNorm));
  out.push_back(Entry("group_norm", "torch.nn.functional.group_norm", "F.group_norm")
                    .Alias({"torch.group_norm"})
                    .Params({Tensor("input"), Attr("num_groups", IntRange(1, 8, {})),
                             OptionalTensor("weight", AuxShape::kChannels),
                             OptionalTensor("bias", AuxShape::kChannels), Attr("eps", Eps())})
                    .Rule(ShapeRule::kSameAsInput)
                    .Rank(2, 5)
                    .Traits(kNormalization)
                    .Flops(8)
                    .Doc("normalize over channel groups of (N, C, *); C % num_groups == 0")
                    .Example({{2, 4, 3, 3}, {4}, {4}}, {I(2), F(1e-5)})
                    .Row(RowKind::kGroupNorm));
  AttrSpec use_input_stats = BoolAttr(true);
  use_input_stats.choices = {AttrValue::Bool(true)};  // False needs running stats: not sampled
  out.push_back(Entry("instance_norm", "torch.nn.functional.instance_norm", "F.instance_norm")
                    .Params({Tensor("input"), OptionalTensor("running_mean", AuxShape::kChannels),
                             PositiveOptionalTensor("running_var", AuxShape::kChannels),
                             OptionalTensor("weight", AuxShape::kChannels),
                             OptionalTensor("bias", AuxShape::kChannels),
                             Attr("use_input_stats", use_input_stats), Attr("momentum", Momentum()),
                             Attr("eps", Eps())})
                    .Rule(ShapeRule::kSameAsInput)
                    .Rank(3, 5)
                    .Traits(kNormalization)
                    .Flops(8)
                    .Doc("normalize each (sample, channel) over its spatial dims (> 1 element)")
                    .Example({{2, 3, 4, 4}, {3}, {3}, {3}, {3}}, {B(true), F(0.1), F(1e-5)})
                    .Row(RowKind::kInstanceNorm));
}

}  // namespace drtriton::catalog_internal
