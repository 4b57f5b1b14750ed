#pragma once
// A one-line progress bar on stderr, redrawn in place, with rate and elapsed time.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace kael::examples {

class Progress {
public:
    Progress(std::string label, std::int64_t total)
        : label_(std::move(label)), total_(total), start_(std::chrono::steady_clock::now()) {}

    void update(std::int64_t done, const std::string& status = "") {
        if (done != total_ && done % 10 != 0) {
            return;
        }
        const int width = 30;
        const auto filled = total_ == 0 ? width : static_cast<int>(width * done / total_);
        std::fprintf(stderr, "\r%s [%s%s] %lld/%lld %.1fs %s", label_.c_str(),
                     std::string(static_cast<std::size_t>(filled), '#').c_str(),
                     std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
                     static_cast<long long>(done), static_cast<long long>(total_), seconds(),
                     status.c_str());
        if (done == total_) {
            std::fprintf(stderr, "\n");
        }
        std::fflush(stderr);
    }

    [[nodiscard]] double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::string label_;
    std::int64_t total_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace kael::examples
