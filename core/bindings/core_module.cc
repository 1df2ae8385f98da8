// drtriton._core: the C++ core as a Python extension.
#include <nanobind/nanobind.h>

#include "bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "drtriton C++ core: operator catalog, program IR, synthesizer, code generator.";
  drtriton::BindCatalog(m);
  drtriton::BindIR(m);
  drtriton::BindSynth(m);
  drtriton::BindCodegen(m);
  drtriton::BindSearch(m);
}
