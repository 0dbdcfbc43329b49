// Compiled by tests/layers in the include context of the event layer: must
// fail at the second line, client/ being above event/.
#include "event/event.hpp"
#include "client/client.hpp"
