// Linux declarations that Swift's Glibc module does not import: signalfd,
// eventfd, and the SO_PEERCRED result (struct ucred needs _GNU_SOURCE).
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/types.h>

/// The layout of `struct ucred` (socket(7), SO_PEERCRED).
struct clinux_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
#endif
