// Module::save and Module::load. File: "KAELPRM2", u64 count, then per parameter u64 name
// length, name, i32 dtype, u64 rank, i64 sizes, raw bytes; last a u32 CRC-32 (zlib) of every
// byte before it. Version 1 files ("KAELPRM1", no CRC) are still read.
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "file_access.h"
#include "kael/error.h"
#include "kael/nn.h"
#include "nn_internal.h"

namespace kael::nn {

namespace {

constexpr char kMagicV1[8] = {'K', 'A', 'E', 'L', 'P', 'R', 'M', '1'};
constexpr char kMagicV2[8] = {'K', 'A', 'E', 'L', 'P', 'R', 'M', '2'};
constexpr std::uint64_t kLongestName = 4096;
constexpr std::uint64_t kHighestRank = 64;

// Reads a regular file front to back, keeping a CRC of what it has read.
class CheckedReader {
public:
    explicit CheckedReader(const std::string& path) : path_(path) {
        const detail::RegularFile file = detail::open_regular_file(path, "load");
        fd_ = file.fd;
        remaining_ = file.size;
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
    detail::AtomicWriter out(path, "save", true);
    const auto named = named_state_tensors(true);
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
