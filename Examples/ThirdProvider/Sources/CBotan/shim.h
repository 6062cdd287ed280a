#include <botan/ffi.h>
