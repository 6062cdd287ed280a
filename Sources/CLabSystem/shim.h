// C library calls the Swift overlay does not export: getrandom(2), and the kernel's
// struct tcp_info (glibc's <netinet/tcp.h> stops before the segment counters).
#ifndef CLAB_SYSTEM_SHIM_H
#define CLAB_SYSTEM_SHIM_H
#if defined(__linux__)
#include <stdint.h>
#include <stddef.h>
#include <sys/random.h>
#include <string.h>

/// The counters the lab reads from a socket's TCP_INFO. Fields a kernel does not fill read
/// as zero (the segment counters came in 4.2 and 4.6, min_rtt in 4.6).
struct lab_tcp_counters {
    uint32_t segs_out;
    uint32_t segs_in;
    uint32_t data_segs_out;
    uint32_t data_segs_in;
    uint32_t total_retrans;
    uint32_t rtt_us;
    uint32_t min_rtt_us;
    uint32_t snd_mss;
};

/// The size of the kernel's struct tcp_info up to tcpi_data_segs_out, the last field read.
/// (<linux/tcp.h> cannot be included here: its struct tcp_info clashes with glibc's, which
/// the Swift overlay imports. The struct is user-space ABI and only grows at its end, so its
/// offsets are constants; TCPInfoTests checks them against `ss`.)
static inline size_t lab_tcp_info_size(void) { return 160; }

/// The counters in `info`, a struct tcp_info as getsockopt(TCP_INFO) filled it (zeroed first).
static inline struct lab_tcp_counters lab_tcp_counters_from(const void *info) {
    const unsigned char *bytes = (const unsigned char *)info;
    struct lab_tcp_counters c;
    memcpy(&c.snd_mss, bytes + 16, 4);        // tcpi_snd_mss
    memcpy(&c.rtt_us, bytes + 68, 4);         // tcpi_rtt
    memcpy(&c.total_retrans, bytes + 100, 4); // tcpi_total_retrans
    memcpy(&c.segs_out, bytes + 136, 4);      // tcpi_segs_out
    memcpy(&c.segs_in, bytes + 140, 4);       // tcpi_segs_in
    memcpy(&c.min_rtt_us, bytes + 148, 4);    // tcpi_min_rtt
    memcpy(&c.data_segs_in, bytes + 152, 4);  // tcpi_data_segs_in
    memcpy(&c.data_segs_out, bytes + 156, 4); // tcpi_data_segs_out
    return c;
}
#endif
#endif
