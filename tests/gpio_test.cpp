// GPIO: the chip interface through its fake, and the marker, alert and trigger signals.
