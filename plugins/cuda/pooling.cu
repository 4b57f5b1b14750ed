// KAEL_EXTENSION_POOLING on the shared pooling tasks (kael/kernels/tasks/pooling.h): one thread
// per output forward, one per input cell backward, gathering without atomics. The emulated
// plugin runs the same tasks, so the conformance suite checks them on every CI machine.
#include "cuda_kernels.h"
#include "cuda_launch.cuh"
#include "kael/kernels/tasks/pooling.h"

namespace kael::cuda {

const kael_pooling* pooling() {
    return kernels::tasks::PoolingTasks<Launcher, &use_device>::table();
}

}  // namespace kael::cuda
