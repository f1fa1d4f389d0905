#include "fulfillsync/daemon/cli/cli.hpp"

int main(int argc, char** argv) { return fulfillsync::daemon::main(argc, argv); }
