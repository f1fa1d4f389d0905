#include <cstdio>

int main() {
  std::puts("fulfillsync-sandbox: not built yet");
  return 1;
}
