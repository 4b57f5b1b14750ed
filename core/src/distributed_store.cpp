// The rendezvous stores of kael/distributed.h. TCPStore: the master serves a key-value map, one
// thread per connected process (worlds are small), with requests of
//     u8 command, u32 key length, key, then the command's operands
// answered in order; every process, the master too, is a client of it. FileStore: records
// appended to one file under flock, read back whole.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "kael/distributed.h"
#include "kael/error.h"

namespace kael::distributed {

namespace {

enum Command : std::uint8_t { kSet = 0, kGet = 1, kAdd = 2, kCheck = 3 };

[[noreturn]] void lost(const std::string& what) {
    throw DeviceError("TCPStore: " + what + " (" + std::strerror(errno) + ")");
}

void write_all(int fd, const void* data, std::size_t bytes) {
    const auto* at = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t sent = ::send(fd, at, bytes, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        if (sent <= 0) {
            lost("the connection to the store was lost while sending");
        }
        at += sent;
        bytes -= static_cast<std::size_t>(sent);
    }
}

// false at a clean end of stream before any byte.
bool read_all(int fd, void* data, std::size_t bytes) {
    auto* at = static_cast<char*>(data);
    const std::size_t wanted = bytes;
    while (bytes > 0) {
        const ssize_t got = ::recv(fd, at, bytes, 0);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got == 0 && bytes == wanted) {
            return false;
        }
        if (got <= 0) {
            lost("the connection to the store was lost while receiving");
        }
        at += got;
        bytes -= static_cast<std::size_t>(got);
    }
    return true;
}

template <typename T> void put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
void put_text(std::string& out, const std::string& text) {
    put(out, static_cast<std::uint64_t>(text.size()));
    out += text;
}
template <typename T> T take(int fd) {
    T value{};
    if (!read_all(fd, &value, sizeof value)) {
        errno = ECONNRESET;
        lost("the peer closed the connection");
    }
    return value;
}
std::string take_text(int fd) {
    std::string text(take<std::uint64_t>(fd), '\0');
    if (!text.empty() && !read_all(fd, text.data(), text.size())) {
        lost("the peer closed the connection");
    }
    return text;
}

std::string timeout_message(const std::string& key, std::chrono::milliseconds timeout) {
    return "store: key '" + key + "' was not set within " + std::to_string(timeout.count()) +
           " ms (a peer process is missing or failed)";
}

}  // namespace

void Store::wait(const std::vector<std::string>& keys) {
    for (const std::string& key : keys) {
        static_cast<void>(get(key));
    }
}

// ---- TCPStore --------------------------------------------------------------------------------

struct Served {
    std::mutex mutex;
    std::condition_variable changed;
    std::map<std::string, std::string> values;
    std::vector<int> clients;
    bool stopping = false;
};

struct TCPStore::State {
    int listen_fd = -1;
    int port = 0;
    std::shared_ptr<Served> served;
    std::thread acceptor;
    int fd = -1;  // this process's connection
    std::mutex request;
};

namespace {

void serve_client(const std::shared_ptr<Served>& served, int fd) {
    try {
        std::uint8_t command = 0;
        while (read_all(fd, &command, 1)) {
            const std::string key = take_text(fd);
            // The operands are read before locking: a slow client must not hold the others.
            const std::string value = command == kSet ? take_text(fd) : std::string();
            const std::int64_t number =
                command == kGet || command == kAdd ? take<std::int64_t>(fd) : 0;
            std::string reply;
            std::unique_lock lock(served->mutex);
            if (command == kSet) {
                served->values[key] = value;
                served->changed.notify_all();
                put(reply, std::uint8_t{0});
            } else if (command == kGet) {
                const auto timeout = std::chrono::milliseconds(number);
                const bool found = served->changed.wait_for(lock, timeout, [&] {
                    return served->stopping || served->values.count(key) != 0;
                });
                if (found && !served->stopping) {
                    put(reply, std::uint8_t{0});
                    put_text(reply, served->values[key]);
                } else {
                    put(reply, std::uint8_t{1});
                }
            } else if (command == kAdd) {
                std::string& stored = served->values[key];
                const std::int64_t sum = (stored.empty() ? 0 : std::stoll(stored)) + number;
                stored = std::to_string(sum);
                served->changed.notify_all();
                put(reply, sum);
            } else if (command == kCheck) {
                put(reply, static_cast<std::uint8_t>(served->values.count(key) != 0 ? 1 : 0));
            } else {
                break;  // a foreign client: drop it
            }
            lock.unlock();
            write_all(fd, reply.data(), reply.size());
        }
    } catch (const std::exception&) {
        // the client went away: its thread ends
    }
    ::close(fd);
}

int connect_to(const std::string& host, int port, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const std::string service = std::to_string(port);
        if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0) {
            throw ValueError("TCPStore: cannot resolve host '" + host + "'");
        }
        for (addrinfo* at = found; at != nullptr; at = at->ai_next) {
            const int fd = ::socket(at->ai_family, at->ai_socktype, at->ai_protocol);
            if (fd >= 0 && ::connect(fd, at->ai_addr, at->ai_addrlen) == 0) {
                ::freeaddrinfo(found);
                const int one = 1;
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                return fd;
            }
            if (fd >= 0) {
                ::close(fd);
            }
        }
        ::freeaddrinfo(found);
        if (std::chrono::steady_clock::now() > deadline) {
            throw DeviceError("TCPStore: no store answered at " + host + ":" + service +
                              " within " + std::to_string(timeout.count()) + " ms");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

}  // namespace

TCPStore::TCPStore(const std::string& host, int port, bool is_master,
                   std::chrono::milliseconds timeout)
    : Store(timeout), state_(std::make_unique<State>()) {
    if (port < 0 || port > 65535) {
        throw ValueError("TCPStore: port " + std::to_string(port) + " is outside [0, 65535]");
    }
    state_->port = port;
    if (is_master) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_ANY);
        address.sin_port = htons(static_cast<std::uint16_t>(port));
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(fd, 128) != 0) {
            const std::string reason = std::strerror(errno);
            if (fd >= 0) {
                ::close(fd);
            }
            throw DeviceError("TCPStore: cannot serve port " + std::to_string(port) + ": " +
                              reason);
        }
        socklen_t length = sizeof address;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
        state_->port = ntohs(address.sin_port);
        state_->listen_fd = fd;
        state_->served = std::make_shared<Served>();
        state_->acceptor = std::thread([served = state_->served, fd] {
            while (true) {
                const int client = ::accept(fd, nullptr, nullptr);
                if (client < 0) {
                    if (errno == EINTR) {
                        continue;
                    }
                    return;  // the listening socket was shut down
                }
                const std::lock_guard lock(served->mutex);
                if (served->stopping) {
                    ::close(client);
                    return;
                }
                served->clients.push_back(client);
                std::thread(serve_client, served, client).detach();
            }
        });
    }
    state_->fd = connect_to(is_master ? "127.0.0.1" : host, state_->port, timeout);
}

TCPStore::~TCPStore() {
    if (state_->fd >= 0) {
        ::close(state_->fd);
    }
    if (state_->served) {
        {
            const std::lock_guard lock(state_->served->mutex);
            state_->served->stopping = true;
            for (const int client : state_->served->clients) {
                ::shutdown(client, SHUT_RDWR);  // its thread then closes it
            }
            state_->served->changed.notify_all();
        }
        ::shutdown(state_->listen_fd, SHUT_RDWR);
        state_->acceptor.join();
        ::close(state_->listen_fd);
    }
}

int TCPStore::port() const {
    return state_->port;
}

void TCPStore::set(const std::string& key, const std::string& value) {
    std::string request;
    put(request, std::uint8_t{kSet});
    put_text(request, key);
    put_text(request, value);
    const std::lock_guard lock(state_->request);
    write_all(state_->fd, request.data(), request.size());
    static_cast<void>(take<std::uint8_t>(state_->fd));
}

std::string TCPStore::get(const std::string& key) {
    std::string request;
    put(request, std::uint8_t{kGet});
    put_text(request, key);
    put(request, static_cast<std::int64_t>(timeout().count()));
    const std::lock_guard lock(state_->request);
    write_all(state_->fd, request.data(), request.size());
    if (take<std::uint8_t>(state_->fd) != 0) {
        throw DeviceError(timeout_message(key, timeout()));
    }
    return take_text(state_->fd);
}

std::int64_t TCPStore::add(const std::string& key, std::int64_t amount) {
    std::string request;
    put(request, std::uint8_t{kAdd});
    put_text(request, key);
    put(request, amount);
    const std::lock_guard lock(state_->request);
    write_all(state_->fd, request.data(), request.size());
    return take<std::int64_t>(state_->fd);
}

bool TCPStore::check(const std::vector<std::string>& keys) {
    const std::lock_guard lock(state_->request);
    for (const std::string& key : keys) {
        std::string request;
        put(request, std::uint8_t{kCheck});
        put_text(request, key);
        write_all(state_->fd, request.data(), request.size());
        if (take<std::uint8_t>(state_->fd) == 0) {
            return false;
        }
    }
    return true;
}

// ---- FileStore -------------------------------------------------------------------------------

namespace {

// The file, locked for the object's life (shared to read, exclusive to write).
class LockedFile {
public:
    LockedFile(const std::string& path, bool exclusive)
        : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
        if (fd_ < 0 || ::flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0) {
            throw OSError(errno, "FileStore: cannot open and lock", path);
        }
    }
    ~LockedFile() { ::close(fd_); }
    LockedFile(const LockedFile&) = delete;
    LockedFile& operator=(const LockedFile&) = delete;

    // Every record, the last value of each key winning.
    [[nodiscard]] std::map<std::string, std::string> read() const {
        std::string bytes;
        char buffer[65536];
        ::lseek(fd_, 0, SEEK_SET);
        ssize_t got = 0;
        while ((got = ::read(fd_, buffer, sizeof buffer)) > 0) {
            bytes.append(buffer, static_cast<std::size_t>(got));
        }
        std::map<std::string, std::string> values;
        std::size_t at = 0;
        const auto text = [&](std::string& out) {
            std::uint64_t length = 0;
            if (bytes.size() - at < sizeof length) {
                return false;
            }
            std::memcpy(&length, bytes.data() + at, sizeof length);
            at += sizeof length;
            if (bytes.size() - at < length) {
                return false;
            }
            out.assign(bytes, at, length);
            at += length;
            return true;
        };
        std::string key;
        std::string value;
        while (text(key) && text(value)) {
            values[key] = value;
        }
        return values;
    }
    void append(const std::string& key, const std::string& value) const {
        std::string record;
        put_text(record, key);
        put_text(record, value);
        if (::write(fd_, record.data(), record.size()) != static_cast<ssize_t>(record.size())) {
            throw OSError(errno, "FileStore: cannot write");
        }
    }

private:
    int fd_;
};

}  // namespace

FileStore::FileStore(std::string path, std::chrono::milliseconds timeout)
    : Store(timeout), path_(std::move(path)) {
    const LockedFile probe(path_, false);  // fails now, with the reason, if it cannot be used
}

void FileStore::set(const std::string& key, const std::string& value) {
    LockedFile(path_, true).append(key, value);
}

std::string FileStore::get(const std::string& key) {
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    while (true) {
        {
            const auto values = LockedFile(path_, false).read();
            if (const auto found = values.find(key); found != values.end()) {
                return found->second;
            }
        }
        if (std::chrono::steady_clock::now() > deadline) {
            throw DeviceError(timeout_message(key, timeout()));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

std::int64_t FileStore::add(const std::string& key, std::int64_t amount) {
    const LockedFile file(path_, true);
    const auto values = file.read();
    const auto found = values.find(key);
    const std::int64_t value = (found == values.end() ? 0 : std::stoll(found->second)) + amount;
    file.append(key, std::to_string(value));
    return value;
}

bool FileStore::check(const std::vector<std::string>& keys) {
    const auto values = LockedFile(path_, false).read();
    for (const std::string& key : keys) {
        if (values.count(key) == 0) {
            return false;
        }
    }
    return true;
}

}  // namespace kael::distributed
