// Forwarding header: the conversions are part of the language (dsl/scalar_convert.h).
#pragma once
#include "dsl/scalar_convert.h"
