// GPIO signals for external instruments: the inference marker, label alerts, the trigger input.
#pragma once
