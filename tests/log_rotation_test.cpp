// Per-frame logs on disk: rotation by size under a total cap, full and read-only disks.
