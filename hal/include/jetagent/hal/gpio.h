// GPIO lines through a chip interface: libgpiod v1 on boards, a fake in tests.
#pragma once
