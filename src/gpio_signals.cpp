// GPIO signals for external instruments.
#include "gpio_signals.h"
