// Conversions between core values and Python objects, shared by the binding files.
#pragma once

#include <nanobind/nanobind.h>

#include "catalog/attr.h"

namespace drtriton {

// None, bool, int, float, str or list[int], as the Python literal would evaluate.
nanobind::object AttrToPython(const AttrValue& value);
nanobind::list ShapeToPython(const Shape& shape);

}  // namespace drtriton
