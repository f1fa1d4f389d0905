#pragma once
// The HTTP(S) transport: accepts connections, reads requests within the size and time limits,
// applies the fault decided for each request, and hands the rest to the Sandbox. All Beast code
// of the sandbox is in server.cpp.
#include "fulfillsync/sandbox/options.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {

// Serves until SIGTERM or SIGINT; prints "listening on http(s)://HOST:PORT" to standard output
// once accepting. Returns the process exit code.
int serve(Sandbox& sandbox, const SandboxOptions& options);

}  // namespace fulfillsync::sandbox
