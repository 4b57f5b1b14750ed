#pragma once
// Opening and writing parameter files safely, shared by checkpoint.cpp (kael's own format) and
// the safetensors reader and writer (not installed).
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kael::nn::detail {

// ValueError "<op>: the path contains a NUL byte" (the OS would read a shorter path).
void reject_nul(const std::string& path, const char* op);

// "a FIFO", "a character device", ... for messages about files that are not regular.
[[nodiscard]] std::string file_kind(mode_t mode);

// A regular file opened read-only; size is what fstat saw. OSError when it cannot be opened
// (IsADirectoryError for a folder), ValueError for a FIFO, device or socket. The caller closes.
struct RegularFile {
    int fd = -1;
    std::uint64_t size = 0;
};
[[nodiscard]] RegularFile open_regular_file(const std::string& path, const char* op);

// Writes a temporary file beside the target; commit() makes it the target in one rename, after
// fsync, so a failed write (OSError) leaves an old file whole. With crc_trailer, commit() first
// appends a u32 CRC-32 (zlib) of every byte written.
class AtomicWriter {
public:
    AtomicWriter(const std::string& path, const char* op, bool crc_trailer);
    AtomicWriter(const AtomicWriter&) = delete;
    AtomicWriter& operator=(const AtomicWriter&) = delete;
    ~AtomicWriter();

    void write(const void* data, std::size_t size);
    template <typename T> void write_value(T value) { write(&value, sizeof(T)); }
    void commit();

private:
    std::string path_;
    std::string op_;
    std::string target_;
    std::string temporary_;
    int fd_ = -1;
    bool committed_ = false;
    bool crc_trailer_;
    unsigned long crc_;
};

}  // namespace kael::nn::detail
