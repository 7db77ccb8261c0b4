#ifndef COURIER_FUZZ_CLIBFUZZER_H
#define COURIER_FUZZ_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry point for a program with a main of its own (compiler-rt's FuzzerInterface.h).
// SwiftPM gives each executable a main of its own, so the targets start libFuzzer through this
// rather than through libFuzzer's main.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
