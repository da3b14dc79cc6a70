// Linux declarations that Swift's Glibc module does not import: signalfd,
// eventfd, pidfd_open, the SO_PEERCRED result (struct ucred needs _GNU_SOURCE),
// and a fork/exec that gives the child a parent-death signal.
#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <unistd.h>

/// pidfd_open(2): a file descriptor that becomes readable when `pid` exits
/// (the Glibc module imports no wrapper; -1 with errno on failure).
static inline int clinux_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/// pipe2(2) with O_CLOEXEC on both ends (not declared without _GNU_SOURCE).
static inline int clinux_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

/// The layout of `struct ucred` (socket(7), SO_PEERCRED).
struct clinux_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// Forks and executes `path` with `argv` and `envp` in a child that receives
/// `death_signal` when the calling *thread* ends (PR_SET_PDEATHSIG; Linux ties
/// it to the thread that forked, so call this from a thread that lives as long
/// as the process). In the child, between fork and execve, only
/// async-signal-safe calls run: every signal back to its default action and
/// unblocked, prctl, then getppid() compared with the parent's pid to close
/// the race where the parent died before prctl, then `stdout_fd` onto
/// descriptor 1 (when >= 0). If any step or execve fails, the child writes
/// errno to `error_fd` (which must be close-on-exec, so a successful execve
/// closes it unwritten) and exits with status 127.
/// Returns the child's pid, or -1 with errno when fork failed.
static inline pid_t clinux_spawn_owned(const char *path, char *const argv[], char *const envp[],
                                       int stdout_fd, int error_fd, int death_signal) {
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
    if (failure == 0 && prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0) != 0) failure = errno;
    if (failure == 0 && getppid() != parent) failure = ESRCH;
    if (failure == 0 && stdout_fd >= 0 && dup2(stdout_fd, 1) < 0) failure = errno;
    if (failure == 0) {
        execve(path, argv, envp);
        failure = errno;
    }
    ssize_t ignored = write(error_fd, &failure, sizeof failure);
    (void)ignored;
    _exit(127);
}
#endif
