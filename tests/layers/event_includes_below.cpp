// Compiled by tests/layers in the include context of the event layer: the
// control of event_includes_client.cpp, the layer's own and lower headers.
#include "event/chain.hpp"
#include "event/process_events.hpp"
#include "evcache/evcache_base.hpp"
#include "gds/gds_base.hpp"
#include "mca/logging.hpp"
#include "ptl/ptl_base.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/regex.hpp"
