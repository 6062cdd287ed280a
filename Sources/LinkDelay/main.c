// link-delay: delay and jitter for a link on kernels without tc's netem (docs/several-hosts.md).
//
// Inside one network namespace, an xtables rule hands every packet arriving on the link to
// NFQUEUE queue N (`iptables -t raw -A PREROUTING -i DEV -j NFQUEUE --queue-num N`). This
// program holds each until its due time, arrival + delay + a uniform draw in ±jitter, then
// accepts it: the kernel goes on with the packet as if it had just arrived. Two-host runs
// one at each end of the veth pair, so a round trip meets the delay twice, as with netem on
// each end's egress.
//
// Order: by default a packet is never due before the one that arrived before it (jitter as
// a queue makes it: the link keeps order); with --reorder each packet keeps its own draw, so
// a later packet may pass an earlier one, as netem's jitter does.
//
// Timing: the wait is ppoll's, to the nanosecond asked, with a timer slack of 1 ns; as root
// the program runs SCHED_FIFO (a waiting program that must wake on time beside the lab's
// busy threads) unless --no-realtime. On SIGTERM, SIGINT or SIGHUP it accepts every packet
// it holds, prints its figures and exits 0: nothing is left waiting. A packet the queue
// cannot take (more than --limit held) is dropped by the kernel, as a full router's queue.
//
// Lines on stdout: `ready queue N delay D jitter J order kept|reorders realtime yes|no`, then
// on SIGUSR1 and at exit `held PACKETS late-p50 US late-p99 US late-max US reordered N
// holding N` (lateness: how long after its due time a packet was accepted; reordered: packets
// accepted after one that arrived later).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>

typedef struct {
    uint64_t due;      // CLOCK_MONOTONIC, ns
    uint32_t id;       // the kernel's packet id
    uint64_t sequence; // arrival order
} held_packet;

typedef struct {
    held_packet *items;
    size_t count, capacity;
} packet_heap;

static int earlier(const held_packet *a, const held_packet *b) {
    return a->due < b->due || (a->due == b->due && a->sequence < b->sequence);
}

static int heap_push(packet_heap *heap, held_packet packet) {
    if (heap->count == heap->capacity) {
        size_t capacity = heap->capacity ? heap->capacity * 2 : 1024;
        held_packet *items = realloc(heap->items, capacity * sizeof *items);
        if (!items) return -1;
        heap->items = items;
        heap->capacity = capacity;
    }
    size_t index = heap->count++;
    heap->items[index] = packet;
    while (index > 0) {
        size_t parent = (index - 1) / 2;
        if (!earlier(&heap->items[index], &heap->items[parent])) break;
        held_packet swap = heap->items[parent];
        heap->items[parent] = heap->items[index];
        heap->items[index] = swap;
        index = parent;
    }
    return 0;
}

static held_packet heap_pop(packet_heap *heap) {
    held_packet top = heap->items[0];
    heap->items[0] = heap->items[--heap->count];
    size_t index = 0;
    for (;;) {
        size_t left = 2 * index + 1, right = left + 1, least = index;
        if (left < heap->count && earlier(&heap->items[left], &heap->items[least])) least = left;
        if (right < heap->count && earlier(&heap->items[right], &heap->items[least])) least = right;
        if (least == index) break;
        held_packet swap = heap->items[least];
        heap->items[least] = heap->items[index];
        heap->items[index] = swap;
        index = least;
    }
    return top;
}

// Lateness in µs, by power-of-two bucket above 1 µs: enough for p50/p99 to within ×2, and the
// maximum exactly.
#define LATE_BUCKETS 40
typedef struct {
    uint64_t buckets[LATE_BUCKETS];
    uint64_t count, maximum;
} lateness;

static void lateness_add(lateness *late, uint64_t nanoseconds) {
    uint64_t micro = nanoseconds / 1000;
    int bucket = 0;
    while (bucket < LATE_BUCKETS - 1 && (1ull << bucket) <= micro) bucket++;
    late->buckets[bucket]++;
    late->count++;
    if (micro > late->maximum) late->maximum = micro;
}

// The bucket's upper edge that holds the quantile q (µs).
static uint64_t lateness_quantile(const lateness *late, double q) {
    if (late->count == 0) return 0;
    uint64_t rank = (uint64_t)(q * (double)(late->count - 1)) + 1, seen = 0;
    for (int bucket = 0; bucket < LATE_BUCKETS; bucket++) {
        seen += late->buckets[bucket];
        if (seen >= rank) {
            uint64_t edge = bucket == 0 ? 1 : (1ull << bucket);
            return edge < late->maximum ? edge : late->maximum;
        }
    }
    return late->maximum;
}

typedef struct {
    uint64_t delay, jitter; // ns
    int reorder;
    uint64_t last_due, sequence, released_sequence, reordered, total;
    uint64_t rng;
    packet_heap heap;
    lateness late;
    int failed;
} link_state;

static uint64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

// xorshift64*: the jitter's draws (not a secret; seeded from the clock or --seed).
static uint64_t next_random(link_state *state) {
    state->rng ^= state->rng >> 12;
    state->rng ^= state->rng << 25;
    state->rng ^= state->rng >> 27;
    return state->rng * 0x2545F4914F6CDD1Dull;
}

static int on_packet(struct nfq_q_handle *queue, struct nfgenmsg *message, struct nfq_data *data, void *context) {
    (void)queue;
    (void)message;
    link_state *state = context;
    struct nfqnl_msg_packet_hdr *header = nfq_get_msg_packet_hdr(data);
    if (!header) return 0;
    uint64_t due = now_ns() + state->delay;
    if (state->jitter > 0) {
        // Uniform in [delay - jitter, delay + jitter] (jitter ≤ delay: checked at start).
        uint64_t span = 2 * state->jitter + 1;
        due = due - state->jitter + next_random(state) % span;
    }
    if (!state->reorder && due < state->last_due) due = state->last_due;
    state->last_due = due;
    held_packet packet = {.due = due, .id = ntohl(header->packet_id), .sequence = state->sequence++};
    if (heap_push(&state->heap, packet) != 0) {
        fprintf(stderr, "link-delay: out of memory holding %zu packets\n", state->heap.count);
        state->failed = 1;
    }
    return 0;
}

// Accepts every packet due by `now` (or all, when `all`); returns -1 if the kernel refused a
// verdict.
static int release(struct nfq_q_handle *queue, link_state *state, uint64_t now, int all) {
    while (state->heap.count > 0 && (all || state->heap.items[0].due <= now)) {
        held_packet packet = heap_pop(&state->heap);
        uint64_t released = now_ns();
        if (!all) lateness_add(&state->late, released > packet.due ? released - packet.due : 0);
        if (packet.sequence < state->released_sequence) state->reordered++;
        else state->released_sequence = packet.sequence;
        state->total++;
        if (nfq_set_verdict(queue, packet.id, NF_ACCEPT, 0, NULL) < 0 && errno != ENOENT) {
            fprintf(stderr, "link-delay: verdict for packet %u: %s\n", packet.id, strerror(errno));
            return -1;
        }
    }
    return 0;
}

// `20ms`, `1.5ms`, `200us`, `0.1s`, or plain nanoseconds: into ns; -1 if not one.
static int64_t duration(const char *text) {
    char *end;
    double value = strtod(text, &end);
    if (end == text || value < 0 || value != value) return -1;
    double scale = 1;
    if (!strcmp(end, "s")) scale = 1e9;
    else if (!strcmp(end, "ms")) scale = 1e6;
    else if (!strcmp(end, "us")) scale = 1e3;
    else if (!strcmp(end, "ns") || !*end) scale = 1;
    else return -1;
    double ns = value * scale;
    if (ns > 10e9) return -1;
    return (int64_t)(ns + 0.5);
}

static volatile sig_atomic_t stopping = 0, reporting = 0;
static void on_signal(int signal) {
    if (signal == SIGUSR1) reporting = 1;
    else stopping = 1;
}

static void report(const link_state *state) {
    printf("held %llu late-p50 %llu late-p99 %llu late-max %llu reordered %llu holding %zu\n",
        (unsigned long long)state->total, (unsigned long long)lateness_quantile(&state->late, 0.5),
        (unsigned long long)lateness_quantile(&state->late, 0.99), (unsigned long long)state->late.maximum,
        (unsigned long long)state->reordered, state->heap.count);
    fflush(stdout);
}

static int usage(const char *problem) {
    fprintf(stderr,
        "link-delay: %s\n"
        "usage: link-delay --queue N --delay DURATION [--jitter DURATION] [--reorder] [--limit PACKETS]\n"
        "                  [--seed N] [--no-realtime]\n"
        "  durations as 20ms, 1.5ms, 200us or 0.1s, at most 10 s; jitter at most the delay\n",
        problem);
    return 2;
}

int main(int argc, char **argv) {
    // A holder outlives the script that starts it: keep none of its descriptors (a pipe its
    // caller waits to see closed) but the three it was given.
    close_range(3, ~0U, 0);
    long queue_number = -1, limit = 100000;
    int64_t delay = -1, jitter = 0;
    int reorder = 0, realtime = 1;
    uint64_t seed = 0;
    for (int index = 1; index < argc; index++) {
        const char *option = argv[index];
        const char *value = index + 1 < argc ? argv[index + 1] : NULL;
        char *end = NULL;
        if (!strcmp(option, "--reorder")) reorder = 1;
        else if (!strcmp(option, "--no-realtime")) realtime = 0;
        else if (!value) return usage("an option lacks its value");
        else if (!strcmp(option, "--queue")) {
            queue_number = strtol(value, &end, 10);
            if (*end || queue_number < 0 || queue_number > 65535) return usage("--queue: expected 0 to 65535");
            index++;
        } else if (!strcmp(option, "--delay")) {
            if ((delay = duration(value)) < 0) return usage("--delay: expected a duration from 0 to 10 s, e.g. 20ms");
            index++;
        } else if (!strcmp(option, "--jitter")) {
            if ((jitter = duration(value)) < 0) return usage("--jitter: expected a duration from 0 to 10 s, e.g. 2ms");
            index++;
        } else if (!strcmp(option, "--limit")) {
            limit = strtol(value, &end, 10);
            if (*end || limit < 1 || limit > 1000000) return usage("--limit: expected 1 to 1000000 packets");
            index++;
        } else if (!strcmp(option, "--seed")) {
            seed = strtoull(value, &end, 10);
            if (*end) return usage("--seed: expected a number");
            index++;
        } else return usage("unknown option");
    }
    if (queue_number < 0 || delay < 0) return usage("--queue and --delay are needed");
    if (jitter > delay) return usage("--jitter is more than --delay: a packet cannot arrive before it was sent");

    link_state state = {.delay = (uint64_t)delay, .jitter = (uint64_t)jitter, .reorder = reorder};
    state.rng = seed ? seed : (now_ns() | 1);

    struct nfq_handle *handle = nfq_open();
    if (!handle) {
        fprintf(stderr, "link-delay: nfq_open: %s (root, and a kernel with nfnetlink_queue?)\n", strerror(errno));
        return 1;
    }
    struct nfq_q_handle *queue = nfq_create_queue(handle, (uint16_t)queue_number, on_packet, &state);
    if (!queue) {
        fprintf(stderr, "link-delay: queue %ld: %s (is another program bound to it?)\n", queue_number, strerror(errno));
        nfq_close(handle);
        return 1;
    }
    // The packet id and headers only: the payload stays in the kernel.
    if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(queue, (uint32_t)limit) < 0) {
        fprintf(stderr, "link-delay: configuring queue %ld: %s\n", queue_number, strerror(errno));
        nfq_destroy_queue(queue);
        nfq_close(handle);
        return 1;
    }
    int fd = nfq_fd(handle);
    int size = 8 << 20, on = 1; // room for bursts: a full socket drops what it cannot take
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on);

    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    int realtime_on = 0;
    if (realtime) {
        struct sched_param parameter = {.sched_priority = 10};
        realtime_on = sched_setscheduler(0, SCHED_FIFO, &parameter) == 0;
    }

    struct sigaction action = {.sa_handler = on_signal};
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    sigaction(SIGUSR1, &action, NULL);
    sigset_t blocked, waiting;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    sigaddset(&blocked, SIGUSR1);
    sigprocmask(SIG_BLOCK, &blocked, &waiting); // signals arrive only inside ppoll
    sigdelset(&waiting, SIGTERM);
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGHUP);
    sigdelset(&waiting, SIGUSR1);

    printf("ready queue %ld delay %.3fms jitter %.3fms order %s realtime %s\n", queue_number, delay / 1e6,
        jitter / 1e6, reorder ? "reorders" : "kept", realtime_on ? "yes" : "no");
    fflush(stdout);

    char buffer[65536] __attribute__((aligned));
    int status = 0;
    while (!stopping && !state.failed) {
        struct timespec timeout, *wait = NULL;
        if (state.heap.count > 0) {
            uint64_t now = now_ns(), due = state.heap.items[0].due;
            uint64_t left = due > now ? due - now : 0;
            timeout.tv_sec = (time_t)(left / 1000000000ull);
            timeout.tv_nsec = (long)(left % 1000000000ull);
            wait = &timeout;
        }
        struct pollfd poller = {.fd = fd, .events = POLLIN};
        int ready = ppoll(&poller, 1, wait, &waiting);
        if (ready < 0 && errno != EINTR) {
            fprintf(stderr, "link-delay: ppoll: %s\n", strerror(errno));
            status = 1;
            break;
        }
        if (ready > 0) {
            for (;;) {
                ssize_t length = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
                if (length < 0) {
                    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
                    if (errno == ENOBUFS) continue; // the kernel dropped what it could not queue
                    fprintf(stderr, "link-delay: recv: %s\n", strerror(errno));
                    status = 1;
                    break;
                }
                nfq_handle_packet(handle, buffer, (int)length);
            }
            if (status) break;
        }
        if (release(queue, &state, now_ns(), 0) != 0) {
            status = 1;
            break;
        }
        if (reporting) {
            reporting = 0;
            report(&state);
        }
    }
    // Nothing is left waiting: whatever is held goes on now.
    release(queue, &state, 0, 1);
    report(&state);
    nfq_destroy_queue(queue);
    nfq_close(handle);
    free(state.heap.items);
    return status || state.failed;
}
