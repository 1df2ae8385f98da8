// The cooperative kernel of softmax and the norms over long rows (heuristics.h
// CooperativeRows, rows_emitter.h Role::kCoop): one read and one write of each element.
//
// The programs walk the items (row, chunk) row-major, each program every num_programs-th item
// from its own id; a chunk is one block.  A program loads its chunk, stores the chunk's
// statistics in the partials planes of the split kernels (rows_split.cc), counts itself
// arrived in the row's counter, waits until all of the row's chunks have, combines the row's
// partials and writes its chunk from the registers it loaded it into.
//
// Why no program waits forever: the launch is cooperative, so all programs are resident at
// once or the launch fails (CUDA refuses the grid); and a program waits only for the chunks
// of its item's row, which sit within `split` consecutive items.  Let i be the lowest item not
// yet published.  Its program, if it is waiting, waits at its previous item i - programs,
// whose row lies wholly below i (a row spans `split` <= programs items), all published.  So
// the program of i reaches i and publishes it: every item is published in the end.  The
// wrapper makes the grid a multiple of `split` (rows never straddle two rounds of items),
// at most the items, and launches this kernel only where at least one row fits
// (`programs >= split`); elsewhere (the CPU interpreter runs programs one after another, so a
// wait there would never end) the split pair of kernels runs instead.
//
// Memory order: the partials are plain stores; a barrier, then the counter's increment with
// release semantics (Triton performs a scalar atomic in one thread), so every thread's stores
// are visible before the count is; the waiting reads the counter with acquire semantics, a
// barrier passes that on to every thread, and the partials are read volatile, from L2: a
// cache line of partials loaded into an SM's L1 for one row also holds the next row's
// (48 chunks of L1 23's softmax are 192 bytes), which the SM would otherwise read stale.
#include <string>

#include "codegen/rows_emitter.h"
#include "codegen/sizes.h"

namespace drtriton::codegen {

std::string RowsEmitter::CountBuffer() const { return WrapperName("count"); }

void RowsEmitter::OpenItemLoop() {
  const std::string split = IntLiteral(config_.split);
  w_.Line("item = pid");
  w_.Open("while item < " + IntLiteral(rows_ * config_.split) + ":");
  w_.Line("row = item // " + split);
  w_.Line("chunk = item % " + split);
  w_.Line("rows = row + tl.arange(0, BLOCK_O)[:, None]");
  w_.Line("start = chunk * " + IntLiteral(config_.chunk));
}

void RowsEmitter::CloseItemLoop() {
  w_.Line("item += tl.num_programs(0)");
  w_.Dedent();
}

void RowsEmitter::AwaitRow() {
  const std::string counter = params_.Scratch(CountBuffer()) + " + row";
  const std::string split = IntLiteral(config_.split);
  w_.Line("tl.debug_barrier()");
  w_.Line("arrived = tl.atomic_add(" + counter + ", 1, sem=\"acq_rel\") + 1");
  w_.Open("while arrived < " + split + ":");
  w_.Line("arrived = tl.atomic_add(" + counter + ", 0, sem=\"acquire\")");
  w_.Dedent();
  w_.Line("tl.debug_barrier()");
}

void RowsEmitter::PublishMaxSum(const std::string& x) {
  w_.Line("xm = tl.where(mask, " + x + ", " + kMinusInf + ")");
  w_.Line("c_max = tl.max(xm, axis=1, keep_dims=True)");
  // A chunk of -inf alone keeps a sum of 0 (exp(-inf - 0)), not NaN (rows_stats.cc).
  w_.Line("c_ref = tl.where(c_max == " + std::string(kMinusInf) + ", 0.0, c_max)");
  w_.Line("c_sum = tl.sum(tl.exp(xm - c_ref), axis=1, keep_dims=True)");
  StorePartials({"c_max", "c_sum"});
  AwaitRow();
}

void RowsEmitter::PublishWelford(const std::string& x) {
  w_.Line("n_chunk = tl.minimum(" + R() + " - start, " + IntLiteral(config_.chunk) +
          ").to(tl.float32)");
  w_.Line("c_mean = tl.sum(tl.where(mask, " + x + ", 0.0), axis=1, keep_dims=True) / n_chunk");
  w_.Line("xc = tl.where(mask, " + x + " - c_mean, 0.0)");
  w_.Line("c_m2 = tl.sum(xc * xc, axis=1, keep_dims=True)");
  StorePartials({"c_mean", "c_m2"});
  AwaitRow();
}

void RowsEmitter::SetCoopLaunch(EmittedKernel& k) const {
  const std::string input = InputDevice(p_);
  const std::string device = input == "'cuda'" ? "torch.device('cuda')" : input;
  const std::string split = IntLiteral(config_.split);
  const std::string programs = WrapperName("programs"), flag = WrapperName("coop");
  k.setup.push_back(CountBuffer() + " = torch.zeros((" + IntLiteral(rows_) + ",), device=" +
                    device + ", dtype=torch.int32)");
  // Whole rows of items in a round: the SMs' resident programs, rounded down to a multiple of
  // the row's chunks, at most the items; none off the GPU.
  k.setup.push_back(programs + " = min(" + IntLiteral(rows_ * config_.split) +
                    ", torch.cuda.get_device_properties(" + device +
                    ").multi_processor_count * " + std::to_string(config_.programs_per_sm) +
                    " // " + split + " * " + split + ") if " + device +
                    ".type == \"cuda\" else 0");
  k.setup.push_back(flag + " = " + programs + " >= " + split);
  k.grid = "(" + programs + ",)";
  k.guard = flag;
  k.launch.cooperative = true;
  k.launch.max_registers = config_.coop_max_registers;
}

}  // namespace drtriton::codegen
