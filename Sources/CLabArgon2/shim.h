// The reference implementation of Argon2 (RFC 9106), as Debian packages it (libargon2-dev).
#include <argon2.h>
