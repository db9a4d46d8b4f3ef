// The systemd service protocol.
#include "service.h"
