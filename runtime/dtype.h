// Forwarding header: DType is part of the language (dsl/dtype.h).
#pragma once
#include "dsl/dtype.h"
