/*
 * The floor under any client on this machine: `SELECT 1` round trips over the Unix
 * socket with nothing but the system calls, no protocol library, no script, no
 * statistics. What it spends per round trip is what the kernel charges a client for a
 * send, a wait and a receive; pgbench-rs and stock pgbench cannot spend less.
 *
 * Two ways to wait, the two the real clients use:
 *   poll        send, poll until readable, recv (pgbench-rs with one client per thread)
 *   recv-first  send, recv without waiting, and only if nothing came: poll, recv
 *               (libpq under stock pgbench: PQconsumeInput before select)
 *
 * Usage: floor SOCKET_PATH USER DBNAME poll|recv-first ROUND_TRIPS [SQL]
 * SQL (default SELECT 1) is sent as a simple query, the same text every time.
 * Prints: user_us kernel_us voluntary_switches, each per round trip, from getrusage
 * around the round trips alone (connection start-up excluded). Trust authentication only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char in[65536];
static size_t have;

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void wait_readable(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, -1) < 0)
        die("poll");
}

static void receive(int fd, int recv_first) {
    ssize_t n;
    if (recv_first) {
        n = recv(fd, in + have, sizeof in - have, MSG_DONTWAIT);
        if (n < 0 && errno == EAGAIN) {
            wait_readable(fd);
            n = recv(fd, in + have, sizeof in - have, 0);
        }
    } else {
        wait_readable(fd);
        n = recv(fd, in + have, sizeof in - have, 0);
    }
    if (n <= 0) {
        fprintf(stderr, "floor: the server closed the connection or recv failed\n");
        exit(1);
    }
    have += (size_t)n;
}

/* Reads messages until ReadyForQuery; an ErrorResponse ends the program. */
static void until_ready(int fd, int recv_first) {
    for (;;) {
        size_t at = 0;
        while (have - at >= 5) {
            uint32_t len;
            memcpy(&len, in + at + 1, 4);
            len = ntohl(len);
            if (have - at < 1 + (size_t)len)
                break;
            char tag = in[at];
            if (tag == 'E') {
                fprintf(stderr, "floor: the server sent an error (trust authentication only)\n");
                exit(1);
            }
            at += 1 + len;
            if (tag == 'Z') {
                memmove(in, in + at, have - at);
                have -= at;
                return;
            }
        }
        memmove(in, in + at, have - at);
        have -= at;
        receive(fd, recv_first);
    }
}

static size_t put_str(char *at, const char *s) {
    size_t n = strlen(s) + 1;
    memcpy(at, s, n);
    return n;
}

static double seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

int main(int argc, char **argv) {
    if ((argc != 6 && argc != 7) || (strcmp(argv[4], "poll") && strcmp(argv[4], "recv-first"))) {
        fprintf(stderr, "usage: floor SOCKET_PATH USER DBNAME poll|recv-first ROUND_TRIPS [SQL]\n");
        return 2;
    }
    int recv_first = strcmp(argv[4], "recv-first") == 0;
    long trips = atol(argv[5]);

    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (fd < 0 || strlen(argv[1]) >= sizeof addr.sun_path)
        die("socket");
    strcpy(addr.sun_path, argv[1]);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0)
        die("connect");

    char startup[512];
    size_t len = 4;
    uint32_t v = htonl(196608); /* protocol 3.0 */
    memcpy(startup + len, &v, 4);
    len += 4;
    len += put_str(startup + len, "user");
    len += put_str(startup + len, argv[2]);
    len += put_str(startup + len, "database");
    len += put_str(startup + len, argv[3]);
    startup[len++] = 0;
    v = htonl((uint32_t)len);
    memcpy(startup, &v, 4);
    if (send(fd, startup, len, 0) != (ssize_t)len)
        die("send");
    until_ready(fd, 0);

    const char *sql = argc == 7 ? argv[6] : "SELECT 1";
    size_t sql_len = strlen(sql) + 1;
    char query[512] = {'Q'};
    if (sql_len > sizeof query - 5) {
        fprintf(stderr, "floor: SQL longer than %zu bytes\n", sizeof query - 6);
        return 2;
    }
    v = htonl((uint32_t)(4 + sql_len));
    memcpy(query + 1, &v, 4);
    memcpy(query + 5, sql, sql_len);
    size_t qlen = 5 + sql_len;

    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    for (long i = 0; i < trips; i++) {
        if (send(fd, query, qlen, 0) != (ssize_t)qlen)
            die("send");
        until_ready(fd, recv_first);
    }
    getrusage(RUSAGE_SELF, &r1);
    printf("%.3f %.3f %.3f\n", (seconds(r1.ru_utime) - seconds(r0.ru_utime)) * 1e6 / trips,
           (seconds(r1.ru_stime) - seconds(r0.ru_stime)) * 1e6 / trips,
           (double)(r1.ru_nvcsw - r0.ru_nvcsw) / trips);
    return 0;
}
