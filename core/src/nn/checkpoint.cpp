// Module::save and Module::load. File: "KAELPRM2", u64 count, then per parameter u64 name
// length, name, i32 dtype, u64 rank, i64 sizes, raw bytes; last a u32 CRC-32 (zlib) of every
// byte before it. Version 1 files ("KAELPRM1", no CRC) are still read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "kael/error.h"
#include "kael/nn.h"
#include "nn_internal.h"

namespace kael::nn {

namespace {

constexpr char kMagicV1[8] = {'K', 'A', 'E', 'L', 'P', 'R', 'M', '1'};
constexpr char kMagicV2[8] = {'K', 'A', 'E', 'L', 'P', 'R', 'M', '2'};
constexpr std::uint64_t kLongestName = 4096;
constexpr std::uint64_t kHighestRank = 64;

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

// Writes a temporary file beside the target; commit() makes it the target in one rename.
class AtomicWriter {
public:
    explicit AtomicWriter(const std::string& path) : path_(path) {
        reject_nul(path, "save");
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
                throw OSError(EISDIR, "save: cannot write", path);
            }
            throw ValueError("save: '" + path + "' is " + file_kind(info.st_mode) +
                             "; save writes regular files only");
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
                throw OSError(errno, "save: cannot create a file beside", path);
            }
        }
    }
    AtomicWriter(const AtomicWriter&) = delete;
    AtomicWriter& operator=(const AtomicWriter&) = delete;
    ~AtomicWriter() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        if (!committed_) {
            ::unlink(temporary_.c_str());
        }
    }

    void write(const void* data, std::size_t size) {
        crc_ = crc32_z(crc_, static_cast<const Bytef*>(data), size);
        const char* bytes = static_cast<const char*>(data);
        while (size > 0) {
            const ssize_t written = ::write(fd_, bytes, size);
            if (written < 0 && errno == EINTR) {
                continue;
            }
            if (written <= 0) {  // EFBIG past ulimit -f, ENOSPC on a full disk, EIO, ...
                throw OSError(written < 0 ? errno : EIO, "save: writing failed", path_);
            }
            bytes += written;
            size -= static_cast<std::size_t>(written);
        }
    }
    template <typename T> void write_value(T value) { write(&value, sizeof(T)); }

    void commit() {
        write_value<std::uint32_t>(static_cast<std::uint32_t>(crc_));
        if (::fsync(fd_) != 0) {
            throw OSError(errno, "save: flushing to disk failed", path_);
        }
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) {
            throw OSError(errno, "save: closing failed", path_);
        }
        if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
            throw OSError(errno, "save: cannot replace", path_);
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

private:
    std::string path_;
    std::string target_;
    std::string temporary_;
    int fd_ = -1;
    bool committed_ = false;
    uLong crc_ = crc32_z(0L, Z_NULL, 0);
};

// Reads a regular file front to back, keeping a CRC of what it has read.
class CheckedReader {
public:
    explicit CheckedReader(const std::string& path) : path_(path) {
        reject_nul(path, "load");
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected below.
        fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd_ < 0) {
            throw OSError(errno, "load: cannot open", path);
        }
        struct stat info {};
        if (::fstat(fd_, &info) != 0) {
            const int code = errno;
            ::close(fd_);
            throw OSError(code, "load: cannot read", path);
        }
        if (!S_ISREG(info.st_mode)) {
            ::close(fd_);
            if (S_ISDIR(info.st_mode)) {
                throw OSError(EISDIR, "load: cannot read", path);
            }
            throw ValueError("load: '" + path + "' is " + file_kind(info.st_mode) +
                             ", not a regular file");
        }
        remaining_ = static_cast<std::uint64_t>(info.st_size);
    }
    CheckedReader(const CheckedReader&) = delete;
    CheckedReader& operator=(const CheckedReader&) = delete;
    ~CheckedReader() { ::close(fd_); }

    [[nodiscard]] std::uint64_t remaining() const { return remaining_; }
    [[nodiscard]] std::uint32_t crc() const { return static_cast<std::uint32_t>(crc_); }
    [[nodiscard]] const std::string& path() const { return path_; }

    void read(void* data, std::size_t size) {
        if (size > remaining_) {
            throw ValueError("load: '" + path_ + "' is truncated");
        }
        char* bytes = static_cast<char*>(data);
        std::size_t left = size;
        while (left > 0) {
            const ssize_t got = ::read(fd_, bytes, left);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got < 0) {
                throw OSError(errno, "load: reading failed", path_);
            }
            if (got == 0) {
                throw ValueError("load: '" + path_ + "' is truncated");
            }
            bytes += got;
            left -= static_cast<std::size_t>(got);
        }
        remaining_ -= size;
        crc_ = crc32_z(crc_, static_cast<const Bytef*>(data), size);
    }
    template <typename T> T read_value() {
        T value{};
        read(&value, sizeof(T));
        return value;
    }

    [[noreturn]] void corrupt(const std::string& what) const {
        throw ValueError("load: '" + path_ + "' is corrupt (" + what + ")");
    }

private:
    std::string path_;
    int fd_ = -1;
    std::uint64_t remaining_ = 0;
    uLong crc_ = crc32_z(0L, Z_NULL, 0);
};

std::pair<std::string, Tensor> read_entry(CheckedReader& in) {
    const auto length = in.read_value<std::uint64_t>();
    if (length > kLongestName) {
        in.corrupt("a name of " + std::to_string(length) + " bytes");
    }
    std::string name(length, '\0');
    in.read(name.data(), length);
    const auto code = in.read_value<std::int32_t>();
    if (code < static_cast<std::int32_t>(DType::F32) || code > static_cast<std::int32_t>(DType::Bool)) {
        in.corrupt("parameter " + detail::printable_name(name) + " has dtype code " +
                   std::to_string(code));
    }
    const auto dtype = static_cast<DType>(code);
    const auto rank = in.read_value<std::uint64_t>();
    if (rank > kHighestRank) {
        in.corrupt("parameter " + detail::printable_name(name) + " has rank " +
                   std::to_string(rank));
    }
    Shape shape(rank);
    auto bytes = static_cast<std::uint64_t>(itemsize(dtype));
    for (std::int64_t& size : shape) {
        size = in.read_value<std::int64_t>();
        // Every size is checked against the bytes left, so no product overflows or
        // allocates more than the file holds.
        if (size < 0 || (size > 0 && bytes > in.remaining() / static_cast<std::uint64_t>(size))) {
            in.corrupt("parameter " + detail::printable_name(name) + " has sizes " +
                       "that the file cannot hold");
        }
        bytes *= static_cast<std::uint64_t>(size);
    }
    Tensor host = empty(shape, dtype);
    in.read(host.device_data(), static_cast<std::size_t>(host.nbytes()));
    return {std::move(name), host};
}

}  // namespace

void Module::save(const std::string& path) const {
    AtomicWriter out(path);
    const auto named = named_parameters();
    out.write(kMagicV2, sizeof(kMagicV2));
    out.write_value<std::uint64_t>(named.size());
    for (const auto& [name, parameter] : named) {
        out.write_value<std::uint64_t>(name.size());
        out.write(name.data(), name.size());
        out.write_value<std::int32_t>(static_cast<std::int32_t>(parameter.dtype()));
        out.write_value<std::uint64_t>(parameter.shape().size());
        for (const std::int64_t size : parameter.shape()) {
            out.write_value<std::int64_t>(size);
        }
        const Tensor host = parameter.detach().cpu().contiguous();
        out.write(host.device_data(), static_cast<std::size_t>(host.nbytes()));
    }
    out.commit();
}

void Module::load(const std::string& path) {
    CheckedReader in(path);
    char magic[sizeof(kMagicV2)];
    if (in.remaining() < sizeof(magic)) {
        throw ValueError("load: '" + path + "' is not a kael parameter file");
    }
    in.read(magic, sizeof(magic));
    const bool version1 = std::memcmp(magic, kMagicV1, sizeof(magic)) == 0;
    if (!version1 && std::memcmp(magic, kMagicV2, sizeof(magic)) != 0) {
        throw ValueError("load: '" + path + "' is not a kael parameter file");
    }
    const auto count = in.read_value<std::uint64_t>();
    std::vector<std::pair<std::string, Tensor>> state;
    for (std::uint64_t i = 0; i < count; ++i) {
        state.push_back(read_entry(in));
    }
    if (!version1) {
        const std::uint32_t computed = in.crc();
        if (in.read_value<std::uint32_t>() != computed) {
            in.corrupt("the checksum does not match its contents");
        }
    }
    if (in.remaining() != 0) {
        in.corrupt(std::to_string(in.remaining()) + " bytes after the last parameter");
    }
    detail::apply_state(*this, state, true, "load '" + path + "'");
}

}  // namespace kael::nn
