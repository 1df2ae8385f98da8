// Each stage binds itself in its own file; core_module.cc calls them in order.
#pragma once

#include <nanobind/nanobind.h>

namespace drtriton {

void BindCatalog(nanobind::module_& m);
void BindIR(nanobind::module_& m);
void BindSynth(nanobind::module_& m);
void BindCodegen(nanobind::module_& m);
void BindSearch(nanobind::module_& m);

}  // namespace drtriton
