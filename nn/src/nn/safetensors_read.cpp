// SafetensorsFile and load_safetensors: the file is mapped, its header checked whole
// (safetensors_header.cpp), and tensors are copied out as stored (BOOL checked to 0 or 1).
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <cerrno>
#include <cstring>

#include "file_access.h"
#include "kael/error.h"
#include "kael/safetensors.h"
#include "nn_internal.h"
#include "safetensors_header.h"

// The format is little-endian and the data are copied as they are.
static_assert(std::endian::native == std::endian::little, "kael reads safetensors on little-endian hosts");

namespace kael {

namespace {

using nn::detail::printable_name;

// Element i of type T at bytes, which need not be aligned for T.
template <typename T> T load(const unsigned char* bytes, std::size_t i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
    return value;
}

template <typename From, typename To, typename Convert>
void convert(const unsigned char* bytes, const Tensor& out, Convert convert_one) {
    auto* values = static_cast<To*>(out.device_data());
    const auto count = static_cast<std::size_t>(out.numel());
    for (std::size_t i = 0; i < count; ++i) {
        values[i] = convert_one(load<From>(bytes, i));
    }
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
    const nn::detail::RegularFile file = nn::detail::open_regular_file(path, "load_safetensors");
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{file.fd};
    if (file.size < 8) {
        detail::throw_invalid_safetensors(path, "it has " + std::to_string(file.size) +
                                                    " bytes, fewer than the 8 of its header length");
    }
    void* map = ::mmap(nullptr, file.size, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (map == MAP_FAILED) {
        throw OSError(errno, "load_safetensors: cannot map", path);
    }
    map_ = static_cast<const unsigned char*>(map);
    map_size_ = file.size;
    try {
        // A file cut short between fstat and mmap would fault on the first read past its end.
        struct stat info {};
        if (::fstat(file.fd, &info) != 0 || static_cast<std::uint64_t>(info.st_size) < file.size) {
            detail::throw_invalid_safetensors(path, "it shrank while it was being opened");
        }
        const auto header_size = load<std::uint64_t>(map_, 0);
        if (header_size > detail::kSafetensorsMaxHeader) {
            detail::throw_invalid_safetensors(
                path, "its header length " + std::to_string(header_size) + " is over the limit of " +
                          std::to_string(detail::kSafetensorsMaxHeader) + " bytes");
        }
        if (header_size > file.size - 8) {
            detail::throw_invalid_safetensors(
                path, "its header length " + std::to_string(header_size) + " is past the end of the file (" +
                          std::to_string(file.size - 8) + " bytes after the length)");
        }
        const std::string_view json(reinterpret_cast<const char*>(map_ + 8), header_size);
        detail::SafetensorsHeader header =
            detail::parse_safetensors_header(json, file.size - 8 - header_size, path);
        entries_ = std::move(header.entries);
        metadata_ = std::move(header.metadata);
        data_ = map_ + 8 + header_size;
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            by_name_.emplace(entries_[i].name, i);
        }
    } catch (...) {
        ::munmap(const_cast<unsigned char*>(map_), map_size_);
        throw;
    }
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      entries_(std::move(other.entries_)),
      by_name_(std::move(other.by_name_)),
      metadata_(std::move(other.metadata_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
    if (this != &other) {
        if (map_ != nullptr) {
            ::munmap(const_cast<unsigned char*>(map_), map_size_);
        }
        path_ = std::move(other.path_);
        map_ = std::exchange(other.map_, nullptr);
        map_size_ = std::exchange(other.map_size_, 0);
        data_ = std::exchange(other.data_, nullptr);
        entries_ = std::move(other.entries_);
        by_name_ = std::move(other.by_name_);
        metadata_ = std::move(other.metadata_);
    }
    return *this;
}

SafetensorsFile::~SafetensorsFile() {
    if (map_ != nullptr) {
        ::munmap(const_cast<unsigned char*>(map_), map_size_);
    }
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
    const auto found = by_name_.find(name);
    return found == by_name_.end() ? nullptr : &entries_[found->second];
}

Tensor SafetensorsFile::read(const std::string& name) const {
    const SafetensorsEntry* entry = find(name);
    if (entry == nullptr) {
        throw ValueError("load_safetensors: '" + path_ + "' has no tensor " + printable_name(name));
    }
    const unsigned char* bytes = data_ + entry->begin;
    const std::string& dtype = entry->dtype;
    // Every dtype but BOOL is read as it is stored.
    static const std::map<std::string, DType, std::less<>> kStoredAsIs = {
        {"F32", DType::F32}, {"F64", DType::F64}, {"I64", DType::I64}, {"I32", DType::I32},
        {"I16", DType::I16}, {"I8", DType::I8},   {"U8", DType::U8},   {"BF16", DType::BF16},
        {"F16", DType::F16}};
    if (const auto as_is = kStoredAsIs.find(dtype); as_is != kStoredAsIs.end()) {
        Tensor out = empty(entry->shape, as_is->second);
        if (out.nbytes() > 0) {
            std::memcpy(out.device_data(), bytes, static_cast<std::size_t>(out.nbytes()));
        }
        return out;
    }
    if (dtype != "BOOL") {
        throw TypeError("load_safetensors: '" + path_ + "': tensor " + printable_name(name) +
                        " has dtype " + dtype + ", which kael does not read (it reads F32, F64, "
                        "BF16, F16, I64, I32, I16, I8, U8 and BOOL)");
    }
    Tensor out = empty(entry->shape, DType::Bool);
    // any byte but 0 is true: a bool must hold exactly 0 or 1
    convert<std::uint8_t, bool>(bytes, out, [](std::uint8_t byte) { return byte != 0; });
    return out;
}

std::vector<std::pair<std::string, Tensor>> load_safetensors(const std::string& path) {
    const SafetensorsFile file(path);
    std::vector<std::pair<std::string, Tensor>> tensors;
    tensors.reserve(file.entries().size());
    for (const SafetensorsEntry& entry : file.entries()) {
        tensors.emplace_back(entry.name, file.read(entry.name));
    }
    return tensors;
}

}  // namespace kael
