// Opening and atomically writing parameter files (see file_access.h).
#include "file_access.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <filesystem>
#include <random>

#include "kael/error.h"

namespace kael::nn::detail {

void reject_nul(const std::string& path, const char* op) {
    if (path.find('\0') != std::string::npos) {
        throw ValueError(std::string(op) + ": the path contains a NUL byte");
    }
}

std::string file_kind(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

RegularFile open_regular_file(const std::string& path, const char* op) {
    reject_nul(path, op);
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        throw OSError(errno, std::string(op) + ": cannot open", path);
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int code = errno;
        ::close(fd);
        throw OSError(code, std::string(op) + ": cannot read", path);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        if (S_ISDIR(info.st_mode)) {
            throw OSError(EISDIR, std::string(op) + ": cannot read", path);
        }
        throw ValueError(std::string(op) + ": '" + path + "' is " + file_kind(info.st_mode) +
                         ", not a regular file");
    }
    return {fd, static_cast<std::uint64_t>(info.st_size)};
}

AtomicWriter::AtomicWriter(const std::string& path, const char* op, bool crc_trailer)
    : path_(path), op_(op), crc_trailer_(crc_trailer), crc_(crc32_z(0L, Z_NULL, 0)) {
    reject_nul(path, op);
    std::filesystem::path target(path);
    std::error_code error;
    if (std::filesystem::is_symlink(target, error)) {  // replace the file, not the link
        const std::filesystem::path resolved = std::filesystem::weakly_canonical(target, error);
        if (!error) {
            target = resolved;
        }
    }
    struct stat info {};
    if (::stat(target.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
        if (S_ISDIR(info.st_mode)) {
            throw OSError(EISDIR, op_ + ": cannot write", path);
        }
        throw ValueError(op_ + ": '" + path + "' is " + file_kind(info.st_mode) + "; " + op_ +
                         " writes regular files only");
    }
    target_ = target.string();
    const std::filesystem::path folder =
        target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::random_device random;
    for (int attempt = 0; fd_ < 0; ++attempt) {
        std::string name = ".";  // appended piecewise: GCC 12 warns on a + chain here
        name.append(target.filename().string()).append(".tmp").append(std::to_string(random()));
        temporary_ = (folder / name).string();
        fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
            throw OSError(errno, op_ + ": cannot create a file beside", path);
        }
    }
}

AtomicWriter::~AtomicWriter() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
    if (!committed_) {
        ::unlink(temporary_.c_str());
    }
}

void AtomicWriter::write(const void* data, std::size_t size) {
    if (crc_trailer_) {
        crc_ = crc32_z(crc_, static_cast<const Bytef*>(data), size);
    }
    const char* bytes = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t written = ::write(fd_, bytes, size);
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {  // EFBIG past ulimit -f, ENOSPC on a full disk, EIO, ...
            throw OSError(written < 0 ? errno : EIO, op_ + ": writing failed", path_);
        }
        bytes += written;
        size -= static_cast<std::size_t>(written);
    }
}

void AtomicWriter::commit() {
    if (crc_trailer_) {
        write_value<std::uint32_t>(static_cast<std::uint32_t>(crc_));
    }
    if (::fsync(fd_) != 0) {
        throw OSError(errno, op_ + ": flushing to disk failed", path_);
    }
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
        throw OSError(errno, op_ + ": closing failed", path_);
    }
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
        throw OSError(errno, op_ + ": cannot replace", path_);
    }
    committed_ = true;
    // The rename itself reaches the disk with the folder; file systems without folder
    // fsync (EINVAL) keep it anyway.
    const std::string folder = std::filesystem::path(target_).has_parent_path()
                                   ? std::filesystem::path(target_).parent_path().string()
                                   : ".";
    const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder_fd >= 0) {
        ::fsync(folder_fd);
        ::close(folder_fd);
    }
}

}  // namespace kael::nn::detail
