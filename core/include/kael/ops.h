#pragma once
// Every tensor operation, by concern: elementwise (ops_elementwise.h), reductions, scans and
// sorting (ops_reduce.h), shape, joins and indexing (ops_shape.h), matrix products
// (ops_linalg.h) and the fused neural-network functions (fast.h). All operands must live on one
// device; every op runs through plugin kernels, never touching tensor data on the host.
#include "kael/fast.h"
#include "kael/ops_elementwise.h"
#include "kael/ops_linalg.h"
#include "kael/ops_reduce.h"
#include "kael/ops_shape.h"
#include "kael/random.h"
