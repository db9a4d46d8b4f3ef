// The systemd service protocol (sd_notify datagrams) and the service main loop.
#pragma once
