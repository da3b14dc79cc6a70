// Linux declarations that Swift's Glibc module does not import: signalfd,
// eventfd, pidfd_open, and the SO_PEERCRED result (struct ucred needs _GNU_SOURCE).
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <unistd.h>

/// pidfd_open(2): a file descriptor that becomes readable when `pid` exits
/// (the Glibc module imports no wrapper; -1 with errno on failure).
static inline int clinux_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/// The layout of `struct ucred` (socket(7), SO_PEERCRED).
struct clinux_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
#endif
