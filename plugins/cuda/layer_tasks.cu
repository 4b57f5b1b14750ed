// KAEL_EXTENSION_POOLING and KAEL_EXTENSION_RECURRENT on the shared tasks (tasks/pooling.h: one
// thread per output forward, one per input cell backward, gathering without atomics;
// tasks/recurrent.h: one thread per LSTM unit). The emulated plugin runs the same tasks, so the
// conformance suite checks them on every CI machine.
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/pooling.h"
#include "kael/kernels/tasks/recurrent.h"

namespace kael::cuda {

const kael_pooling* pooling() {
    return kernels::tasks::PoolingTasks<Launcher, &use_device>::table();
}

const kael_recurrent* recurrent() {
    return kernels::tasks::RecurrentTasks<Launcher, &use_device>::table();
}

}  // namespace kael::cuda
