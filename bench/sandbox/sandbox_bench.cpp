// Throughput and memory of fulfillsync-sandbox over keep-alive loopback connections, with faults
// and rate limiting off:
//   1. POST /order per second (target 5,000 or more on one core);
//   2. GET /order pages of 250 orders per second (target 500 or more);
//   3. resident memory with N stored orders (target under 2 GiB for 1,000,000), seeded through
//      the admin bulk path so it takes seconds, not minutes.
// Usage: sandbox_bench [--orders-to-post N] [--pages N] [--stored-orders N] [--connections N]
//                      [--sandbox PATH]
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  long orders_to_post = 20000;
  long pages = 2000;
  long stored_orders = 1000000;
  int connections = 2;
  std::string sandbox;
};

// One keep-alive HTTP/1.1 connection; reads responses by Content-Length.
class Connection {
 public:
  explicit Connection(std::uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("cannot connect to the sandbox");
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Connection() { close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends a request and returns the status; `body_out` receives the body when given.
  int request(const std::string& raw, std::string* body_out = nullptr) {
    for (std::size_t sent = 0; sent < raw.size();) {
      const ssize_t n = send(fd_, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<std::size_t>(n);
    }
    for (;;) {
      const auto head_end = buffer_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const auto length_at = find_header(buffer_, head_end, "content-length:");
        const std::size_t length = length_at == std::string::npos ? 0 : std::stoul(buffer_.substr(length_at + 15));
        if (buffer_.size() >= head_end + 4 + length) {
          const int status = std::stoi(buffer_.substr(9, 3));
          if (body_out != nullptr) *body_out = buffer_.substr(head_end + 4, length);
          buffer_.erase(0, head_end + 4 + length);
          return status;
        }
      }
      char chunk[65536];
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) throw std::runtime_error("connection closed");
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  static std::size_t find_header(const std::string& text, std::size_t end, const char* lower_name) {
    for (std::size_t at = 0; at < end;) {
      const auto line_end = text.find("\r\n", at);
      if (line_end == std::string::npos || line_end > end) break;
      if (strncasecmp(text.data() + at, lower_name, std::strlen(lower_name)) == 0) return at;
      at = line_end + 2;
    }
    return std::string::npos;
  }
  int fd_ = -1;
  std::string buffer_;
};

struct Sandbox {
  pid_t pid = -1;
  std::uint16_t port = 0;
};

Sandbox start_sandbox(const std::string& path) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    execl(path.c_str(), path.c_str(), "--listen", "127.0.0.1:0", "--token", "bench", "--admin-token", "bench-admin",
          "--rate-limit", "off", "--log-level", "warn", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(out[0]);
  const auto colon = line.rfind(':');
  if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
    throw std::runtime_error("the sandbox did not start: '" + line + "'");
  }
  return {pid, static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)))};
}

std::string post_order(long n) {
  const std::string body =
      R"({"reference_id":"BENCH-)" + std::to_string(n) +
      R"(","shipping_method":"Standard","recipient":{"name":"Ada Lovelace","email":"ada@example.test","address":{"address1":"1 Main St","city":"Chicago","state":"IL","zip_code":"60601","country":"US"}},"products":[{"reference_id":"BENCH-SKU","name":"Bench Widget","quantity":1}],"financials":{"total_price":19.99}})";
  return "POST /2026-01/order HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer bench\r\nservice_channel_id: 2\r\n"
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Options parse_options(int argc, char** argv) {
  Options options;
  options.sandbox = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "fulfillsync-sandbox").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const std::string value = argv[i + 1];
    if (name == "--orders-to-post") options.orders_to_post = std::atol(value.c_str());
    else if (name == "--pages") options.pages = std::atol(value.c_str());
    else if (name == "--stored-orders") options.stored_orders = std::atol(value.c_str());
    else if (name == "--connections") options.connections = std::atoi(value.c_str());
    else if (name == "--sandbox") options.sandbox = value;
    else throw std::runtime_error("unknown option " + name);
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    const Sandbox sandbox = start_sandbox(options.sandbox);
    std::printf("sandbox pid %d on port %u; %d keep-alive connection(s)\n", sandbox.pid, sandbox.port, options.connections);

    {  // 1. POST /order
      Connection warm(sandbox.port);
      warm.request(post_order(0));
      std::atomic<long> next{1};
      std::atomic<long> failures{0};
      const auto start = Clock::now();
      std::vector<std::thread> clients;
      for (int c = 0; c < options.connections; ++c) {
        clients.emplace_back([&] {
          Connection connection(sandbox.port);
          for (long n; (n = next.fetch_add(1)) <= options.orders_to_post;) {
            if (connection.request(post_order(n)) != 201) ++failures;
          }
        });
      }
      for (auto& client : clients) client.join();
      const double elapsed = seconds_since(start);
      std::printf("POST /order: %ld orders in %.2f s = %.0f orders/s (%ld failed)\n", options.orders_to_post, elapsed,
                  static_cast<double>(options.orders_to_post) / elapsed, failures.load());
    }

    {  // 2. GET /order pages of 250
      const long stored = options.orders_to_post + 1;
      const long pages_available = (stored + 249) / 250;
      std::atomic<long> next{0};
      std::atomic<long> bytes{0};
      const auto start = Clock::now();
      std::vector<std::thread> clients;
      for (int c = 0; c < options.connections; ++c) {
        clients.emplace_back([&] {
          Connection connection(sandbox.port);
          std::string body;
          for (long n; (n = next.fetch_add(1)) < options.pages;) {
            const std::string request = "GET /2026-01/order?Limit=250&Page=" + std::to_string(n % pages_available + 1) +
                                        " HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer bench\r\n\r\n";
            if (connection.request(request, &body) != 200) throw std::runtime_error("GET /order failed");
            bytes += static_cast<long>(body.size());
          }
        });
      }
      for (auto& client : clients) client.join();
      const double elapsed = seconds_since(start);
      std::printf("GET /order?Limit=250: %ld pages in %.2f s = %.0f pages/s (%.1f MB/s, %ld orders stored)\n",
                  options.pages, elapsed, static_cast<double>(options.pages) / elapsed,
                  static_cast<double>(bytes.load()) / elapsed / 1e6, stored);
    }

    {  // 3. resident memory with N stored orders
      Connection admin(sandbox.port);
      const long before = resident_kib(sandbox.pid);
      const long to_add = options.stored_orders - (options.orders_to_post + 1);
      const auto start = Clock::now();
      for (long added = 0; added < to_add;) {
        const long batch = std::min(to_add - added, 100000L);
        const std::string request = "POST /_sandbox/orders:bulk?count=" + std::to_string(batch) +
                                    " HTTP/1.1\r\nHost: bench\r\nX-Sandbox-Admin-Token: bench-admin\r\nContent-Length: 0\r\n\r\n";
        if (admin.request(request) != 201) throw std::runtime_error("bulk seeding failed");
        added += batch;
      }
      const double elapsed = seconds_since(start);
      const long after = resident_kib(sandbox.pid);
      std::printf("memory: %ld orders stored (seeded in %.1f s); resident %.1f MiB (%.1f MiB before seeding) = %.0f bytes/order\n",
                  std::max(options.stored_orders, options.orders_to_post + 1), elapsed, static_cast<double>(after) / 1024,
                  static_cast<double>(before) / 1024,
                  static_cast<double>(after) * 1024 / static_cast<double>(std::max(options.stored_orders, 1L)));
      std::string body;
      const auto page_start = Clock::now();
      for (int i = 0; i < 20; ++i) {
        admin.request("GET /2026-01/order?Limit=250&Page=" + std::to_string((i * 997) % ((std::max(options.stored_orders, options.orders_to_post + 1) + 249) / 250) + 1) +
                          " HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer bench\r\n\r\n",
                      &body);
      }
      std::printf("GET /order?Limit=250 with %ld orders stored: %.0f pages/s (one connection)\n",
                  std::max(options.stored_orders, options.orders_to_post + 1), 20 / seconds_since(page_start));
    }

    kill(sandbox.pid, SIGTERM);
    int status = 0;
    waitpid(sandbox.pid, &status, 0);
    std::printf("sandbox exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "sandbox_bench: %s\n", error.what());
    return 1;
  }
}
