// jetagent run as systemd runs it: a fake NOTIFY_SOCKET, signals, reloads.
