#pragma once
// Whether a file may be handed to dlopen. Only a regular file: opening a FIFO blocks forever and
// a device never ends. And, when it is ELF, a whole one: the loader maps every segment the
// program headers name, and touching a mapped page past the end of a truncated file is SIGBUS,
// which no error handling can catch. Header-only and private (kael_loader_checks, never
// installed), so the core's plugin registry and the cpu plugin's BLAS loader share one definition.
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// Inline functions would otherwise be exported from every library that includes this.
#pragma GCC visibility push(hidden)

namespace kael::loadable {

namespace detail {

inline std::string file_type_name(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// Whether [offset, offset + length) lies within a file of file_size bytes, without overflow.
inline bool within(std::uint64_t offset, std::uint64_t length, std::uint64_t file_size) {
    return offset <= file_size && length <= file_size - offset;
}

inline bool read_exactly(int fd, void* buffer, std::size_t length, std::uint64_t offset) {
    auto* bytes = static_cast<char*>(buffer);
    while (length > 0) {
        const ssize_t got = pread(fd, bytes, length, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        bytes += got;
        length -= static_cast<std::size_t>(got);
        offset += static_cast<std::uint64_t>(got);
    }
    return true;
}

inline std::string past_the_end(const std::string& what, std::uint64_t end, std::uint64_t size) {
    return "truncated or corrupt ELF file: " + what + " ends at byte " + std::to_string(end) +
           ", but the file has " + std::to_string(size) + " bytes";
}

template <typename Header, typename ProgramHeader>
std::string check_elf(int fd, std::uint64_t size) {
    Header header{};
    if (size < sizeof(header) || !read_exactly(fd, &header, sizeof(header), 0)) {
        return past_the_end("the ELF header", sizeof(header), size);
    }
    const std::uint64_t phnum = header.e_phnum;
    if (phnum > 0 && header.e_phentsize != sizeof(ProgramHeader)) {
        return "corrupt ELF file: program header entries of " + std::to_string(header.e_phentsize) +
               " bytes, expected " + std::to_string(sizeof(ProgramHeader));
    }
    if (!within(header.e_phoff, phnum * sizeof(ProgramHeader), size)) {
        return past_the_end("the program header table",
                            header.e_phoff + phnum * sizeof(ProgramHeader), size);
    }
    std::vector<ProgramHeader> segments(phnum);
    if (phnum > 0 &&
        !read_exactly(fd, segments.data(), phnum * sizeof(ProgramHeader), header.e_phoff)) {
        return "the program header table cannot be read";
    }
    for (std::uint64_t k = 0; k < phnum; ++k) {
        const ProgramHeader& segment = segments[k];
        if (!within(segment.p_offset, segment.p_filesz, size)) {
            return past_the_end("program header " + std::to_string(k) + "'s segment",
                                std::uint64_t{segment.p_offset} + segment.p_filesz, size);
        }
    }
    // e_shnum 0 with a table present means the count lives in section 0; one entry must fit.
    const std::uint64_t shnum = header.e_shnum == 0 && header.e_shoff != 0 ? 1 : header.e_shnum;
    if (shnum > 0 && !within(header.e_shoff, shnum * header.e_shentsize, size)) {
        return past_the_end("the section header table", header.e_shoff + shnum * header.e_shentsize,
                            size);
    }
    return "";
}

inline bool host_byte_order(unsigned char data) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return data == ELFDATA2LSB;
#else
    return data == ELFDATA2MSB;
#endif
}

}  // namespace detail

// Empty when `path` may be given to dlopen; otherwise why not, in words a user can act on.
// Files that are not ELF, or not for this machine, pass: the loader reads their first bytes
// without mapping anything and gives its own message ("invalid ELF header").
inline std::string why_not_loadable(const std::string& path) {
    struct stat status {};
    if (stat(path.c_str(), &status) != 0) {  // follows symbolic links
        return std::string("cannot be read: ") + std::strerror(errno);
    }
    if (!S_ISREG(status.st_mode)) {
        return "is " + detail::file_type_name(status.st_mode) +
               ", not a regular file; only regular files are loaded";
    }
    // O_NONBLOCK: should the file be swapped for a FIFO after stat, open must still not block.
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return std::string("cannot be opened: ") + std::strerror(errno);
    }
    std::string reason;
    unsigned char ident[EI_NIDENT] = {};
    if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
        reason = "changed into something other than a regular file while being checked";
    } else if (detail::read_exactly(fd, ident, sizeof(ident), 0) &&
               std::memcmp(ident, ELFMAG, SELFMAG) == 0 &&
               detail::host_byte_order(ident[EI_DATA])) {
        const auto size = static_cast<std::uint64_t>(status.st_size);
        if (ident[EI_CLASS] == ELFCLASS64) {
            reason = detail::check_elf<Elf64_Ehdr, Elf64_Phdr>(fd, size);
        } else if (ident[EI_CLASS] == ELFCLASS32) {
            reason = detail::check_elf<Elf32_Ehdr, Elf32_Phdr>(fd, size);
        }
    }
    close(fd);
    return reason;
}

}  // namespace kael::loadable

#pragma GCC visibility pop
