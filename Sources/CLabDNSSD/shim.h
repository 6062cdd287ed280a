// Avahi's Bonjour-compatible DNS-SD API (libavahi-compat-libdnssd-dev).
#include <dns_sd.h>
