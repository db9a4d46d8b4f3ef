// GPIO lines through libgpiod v1.
#include "jetagent/hal/gpio.h"
