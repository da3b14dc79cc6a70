// Linux declarations that Swift's Glibc module does not import, for the IO
// module: mallopt, epoll (through helpers, so Swift never sees the packed struct
// epoll_event), signalfd, eventfd, pidfd_open, the SO_PEERCRED result (struct
// ucred needs _GNU_SOURCE), and a fork/exec that can give the child a
// parent-death signal.
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/// pidfd_open(2): a file descriptor that becomes readable when `pid` exits
/// (the Glibc module imports no wrapper; -1 with errno on failure).
static inline int clinux_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/// pidfd_send_signal(2): `signal` to the process of `pidfd` (never to a reused pid); -1 with errno on failure.
static inline int clinux_pidfd_send_signal(int pidfd, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, 0, 0);
}

/// mallopt(M_MMAP_THRESHOLD, bytes): allocations of at least `bytes` get a mapping of their own, and glibc no
/// longer raises the threshold by itself. Returns 1 on success.
static inline int clinux_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

/// Names the calling thread (at most 15 bytes are kept) for ps, top and debuggers.
static inline void clinux_name_thread(const char *name) {
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

/// pipe2(2) with O_CLOEXEC on both ends (not declared without _GNU_SOURCE).
static inline int clinux_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

/// accept4(2) with SOCK_CLOEXEC and SOCK_NONBLOCK (not declared without _GNU_SOURCE).
static inline int clinux_accept(int fd) {
    return (int)syscall(SYS_accept4, fd, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

/// The layout of `struct ucred` (socket(7), SO_PEERCRED).
struct clinux_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// epoll_ctl(2) with the registration's 64-bit token as the event data.
static inline int clinux_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

/// epoll_wait(2) into two plain arrays (tokens and event masks) of at most
/// 64 entries; returns the count, or -1 with errno.
static inline int clinux_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epfd, ready, capacity, timeout);
    for (int index = 0; index < count; index++) {
        tokens[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

/// Puts `fd` on descriptor `target` in a child between fork and execve:
/// dup2, or clearing close-on-exec when it is already there.
static inline int clinux_place_fd(int fd, int target) {
    if (fd < 0) return 0;
    if (fd == target) {
        int flags = fcntl(fd, F_GETFD);
        return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
    }
    return dup2(fd, target) < 0 ? -1 : 0;
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/// Marks every descriptor from `first` on close-on-exec, in a child between
/// fork and execve (async-signal-safe): close_range(2) with
/// CLOSE_RANGE_CLOEXEC, or, where the kernel lacks it, fcntl on each number
/// below the soft RLIMIT_NOFILE (at most 2^20).
static inline void clinux_cloexec_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned int)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
    struct rlimit limit;
    long last = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) last = (long)limit.rlim_cur;
    if (last > (1L << 20)) last = 1L << 20;
    for (long fd = first; fd < last; fd++) {
        int flags = fcntl((int)fd, F_GETFD);
        if (flags >= 0 && (flags & FD_CLOEXEC) == 0) fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

/// Forks and executes `path` with `argv` and `envp`. In the child, between
/// fork and execve, only async-signal-safe calls run: every signal back to its
/// default action and unblocked; with `death_signal` > 0, PR_SET_PDEATHSIG
/// (Linux ties it to the calling *thread*: call this from a thread that lives
/// as long as the child should) and getppid() compared with the parent's pid
/// to close the race where the parent died before prctl; then `stdin_fd`,
/// `stdout_fd` and `stderr_fd` (when >= 0; they must be 3 or above, or already
/// the descriptor they go to) onto descriptors 0, 1 and 2, and every other
/// descriptor marked close-on-exec, so the child gets only those three
/// whatever a library left inheritable (libmosquitto's sockets are). If any step or
/// execve fails, the child writes errno to `error_fd` (which must be
/// close-on-exec, so a successful execve closes it unwritten) and exits with
/// status 127. Returns the child's pid, or -1 with errno when fork failed.
static inline pid_t clinux_spawn(const char *path, char *const argv[], char *const envp[], int stdin_fd,
                                 int stdout_fd, int stderr_fd, int error_fd, int death_signal) {
    pid_t parent = getpid();
    pid_t child = fork();
    if (child != 0) return child;
    struct sigaction defaults;
    defaults.sa_handler = SIG_DFL;
    defaults.sa_flags = 0;
    sigemptyset(&defaults.sa_mask);
    for (int signal_number = 1; signal_number < 65; signal_number++) {
        if (signal_number != SIGKILL && signal_number != SIGSTOP) sigaction(signal_number, &defaults, 0);
    }
    sigset_t empty;
    sigemptyset(&empty);
    int failure = 0;
    if (sigprocmask(SIG_SETMASK, &empty, 0) != 0) failure = errno;
    if (failure == 0 && death_signal > 0) {
        if (prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0) != 0) failure = errno;
        if (failure == 0 && getppid() != parent) failure = ESRCH;
    }
    if (failure == 0 && clinux_place_fd(stdin_fd, 0) != 0) failure = errno;
    if (failure == 0 && clinux_place_fd(stdout_fd, 1) != 0) failure = errno;
    if (failure == 0 && clinux_place_fd(stderr_fd, 2) != 0) failure = errno;
    if (failure == 0) clinux_cloexec_from(3);
    if (failure == 0) {
        execve(path, argv, envp);
        failure = errno;
    }
    ssize_t ignored = write(error_fd, &failure, sizeof failure);
    (void)ignored;
    _exit(127);
}
/// recvmsg(2) without blocking of at most `length` bytes into `buffer`, keeping the descriptors that came with
/// them (SCM_RIGHTS, received close-on-exec): up to `capacity` go to `fds` and their number to `*count`; any beyond
/// are closed and `*truncated` is set, as it is when the kernel dropped some (MSG_CTRUNC). Returns the byte count,
/// 0 at end of stream, or -1 with errno.
static inline ssize_t clinux_recv_with_fds(int fd, void *buffer, size_t length, int *fds, int capacity, int *count,
                                           int *truncated) {
    union {
        char bytes[CMSG_SPACE(sizeof(int) * 253)];
        struct cmsghdr align;
    } control;
    struct iovec vector = {buffer, length};
    struct msghdr message = {0};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    *count = 0;
    *truncated = 0;
    ssize_t result = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (result < 0) return result;
    if (message.msg_flags & MSG_CTRUNC) *truncated = 1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t received = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *data = (int *)CMSG_DATA(header);
        for (size_t index = 0; index < received; index++) {
            if (*count < capacity) {
                fds[(*count)++] = data[index];
            } else {
                close(data[index]);
                *truncated = 1;
            }
        }
    }
    return result;
}

#endif
