#include "blas_loader.h"
#include "cpu_kernels.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "kael/loadable_file.h"

namespace kael::cpu {

namespace {

std::string first_two_words(const std::string& text) {
    std::size_t end = text.find(' ');
    if (end != std::string::npos) {
        end = text.find(' ', end + 1);
    }
    return text.substr(0, end);
}

Blas load() {
    Blas found;
    const char* requested = std::getenv("KAEL_CPU_BLAS");
    std::vector<std::string> candidates{"libopenblas.so.0", "libblas.so.3", "libcblas.so.3"};
    if (requested != nullptr && *requested != '\0') {
        if (std::string(requested) == "none") {
            found.description = "none (KAEL_CPU_BLAS=none): kael's own loops";
            return found;
        }
        candidates = {requested};
    }
    std::string tried;
    for (const std::string& name : candidates) {
        // A path (not a name the loader searches for) is checked first: a FIFO would block
        // dlopen forever and a truncated library is SIGBUS.
        if (name.find('/') != std::string::npos) {
            if (const std::string problem = loadable::why_not_loadable(name); !problem.empty()) {
                tried.append(tried.empty() ? "" : "; ").append(name).append(": ").append(problem);
                continue;
            }
        }
        void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            const char* error = dlerror();
            tried += (tried.empty() ? "" : "; ") + std::string(error != nullptr ? error : name);
            continue;
        }
        found.sgemm = reinterpret_cast<GemmFunction<float>>(dlsym(library, "cblas_sgemm"));
        found.dgemm = reinterpret_cast<GemmFunction<double>>(dlsym(library, "cblas_dgemm"));
        if (found.sgemm == nullptr || found.dgemm == nullptr) {
            found = Blas();
            tried += (tried.empty() ? "" : "; ") + name + " has no cblas_sgemm/cblas_dgemm";
            continue;  // never dlclosed: unloading libraries at run time is not worth the risk
        }
        found.sgemv = reinterpret_cast<GemvFunction<float>>(dlsym(library, "cblas_sgemv"));
        found.dgemv = reinterpret_cast<GemvFunction<double>>(dlsym(library, "cblas_dgemv"));
        // OpenBLAS's own threads take the plugin's count, so the two never oversubscribe.
        found.set_threads =
            reinterpret_cast<SetThreadsFunction>(dlsym(library, "openblas_set_num_threads"));
        if (found.set_threads != nullptr) {
            found.set_threads(worker_count());
        }
        using ConfigFunction = const char* (*)();
        const auto config = reinterpret_cast<ConfigFunction>(dlsym(library, "openblas_get_config"));
        found.description = (config != nullptr ? first_two_words(config()) : std::string("CBLAS")) +
                            " (" + name + ")";
        return found;
    }
    found.description = "none found, kael's own loops (" + tried + ")";
    return found;
}

}  // namespace

const Blas& blas() {
    static const Blas loaded = load();
    return loaded;
}

void blas_threads(int threads) {
    if (blas().set_threads != nullptr) {
        blas().set_threads(threads);
    }
}

}  // namespace kael::cpu
