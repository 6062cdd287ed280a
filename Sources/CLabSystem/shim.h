// C library calls the Swift overlay does not export: getrandom(2).
#ifndef CLAB_SYSTEM_SHIM_H
#define CLAB_SYSTEM_SHIM_H
#if defined(__linux__)
#include <sys/random.h>
#endif
#endif
