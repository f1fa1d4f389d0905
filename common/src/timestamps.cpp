#include "fulfillsync/common/timestamps.hpp"
