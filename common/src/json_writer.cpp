#include "fulfillsync/common/json_writer.hpp"
