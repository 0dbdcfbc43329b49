// Compiled by tests/layers in the include context of the server layer: must
// fail at the second line, client/ being server/'s sibling (only api/ sees both).
#include "server/upcalls.hpp"
#include "client/client.hpp"
