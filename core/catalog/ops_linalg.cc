// Contractions and layout: matmul, bmm, linear, transpose.  Contractions count 2 FLOPs
// per multiply-add, as torch.utils.flop_counter does (bias additions are not counted).
#include "catalog/entry_builder.h"

namespace drtriton::catalog_internal {

void AddLinalgOps(std::vector<OpInfo>& out) {
  out.push_back(Entry("matmul", "torch.matmul", "torch.matmul")
                    .Params({Tensor("input"), Tensor("other")})
                    .Rule(ShapeRule::kMatmul)
                    .Rank(2, 5)
                    .Traits(kContraction)
                    .Flops(2)
                    .Doc("(..., M, K) @ (..., K, N) -> (..., M, N), batch dims broadcast")
                    .Example({{2, 3, 4}, {4, 5}}));
  out.push_back(Entry("bmm", "torch.bmm", "torch.bmm")
                    .Params({Tensor("input"), Tensor("mat2")})
                    .Rule(ShapeRule::kBmm)
                    .Rank(3, 3)
                    .Traits(kContraction)
                    .Flops(2)
                    .Doc("(B, M, K) @ (B, K, N) -> (B, M, N)")
                    .Example({{2, 3, 4}, {2, 4, 5}}));
  out.push_back(Entry("linear", "torch.nn.functional.linear", "F.linear")
                    .Params({Tensor("input"), Tensor("weight"), OptionalTensor("bias")})
                    .Rule(ShapeRule::kLinear)
                    .Rank(1, 5)
                    .Traits(kContraction)
                    .Flops(2)
                    .Doc("x @ weight.T + bias: (..., K), (N, K), (N,) -> (..., N)")
                    .Example({{2, 3, 4}, {5, 4}, {5}}));
  out.push_back(Entry("transpose", "torch.transpose", "torch.transpose")
                    .Alias({"torch.swapaxes", "torch.swapdims"})
                    .Params({Tensor("input"), Attr("dim0", DimAttr()), Attr("dim1", DimAttr())})
                    .Rule(ShapeRule::kTranspose)
                    .Rank(2, 5)
                    .Traits(kLayout | kReordersDims)
                    .Flops(0)
                    .Doc("swap dims dim0 and dim1 (a view in PyTorch)")
                    .Example({{2, 3, 4}}, {I(-2), I(-1)}));
}

}  // namespace drtriton::catalog_internal
