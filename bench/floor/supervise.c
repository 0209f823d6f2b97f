/*
 * Supervision floor: the kernel work of running N commands one after another the way
 * a runner that captures output and watches its children must, without any of the
 * runner's own code. Each step is a vfork-style clone that execs CMD; what the parent
 * adds around it is chosen by letters:
 *
 *   supervise LETTERS N CMD [ARG...]
 *     p  stdout and stderr into two pipes made for the step (else inherited)
 *     f  a pidfd for the child, waited on with epoll beside the pipes (else a
 *        blocking wait4), as an event loop that also serves timers and signals must
 *     g  the child in its own process group, and the group killed after it exits
 *   "-" for none: the make-like floor (clone, exec, wait4).
 *
 * flow's pattern is "pfg". bench/cpu.py compares the CPU time of each against
 * flow and make on the same steps.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct request { char **argv; int out, err, group; };

static int child(void *argument)
{
    struct request *r = argument;
    if (r->group) setpgid(0, 0);
    if (r->out >= 0) { dup2(r->out, 1); dup2(r->err, 2); }
    execvp(r->argv[0], r->argv);
    _exit(127);
}

static char stack[65536];

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: supervise LETTERS|- N CMD [ARG...]\n");
        return 2;
    }
    const char *letters = argv[1];
    int pipes = strchr(letters, 'p') != NULL, pidfds = strchr(letters, 'f') != NULL;
    int group = strchr(letters, 'g') != NULL;
    long n = atol(argv[2]);
    int loop = epoll_create1(EPOLL_CLOEXEC);
    int failures = 0;
    for (long i = 0; i < n; i++) {
        int out[2] = {-1, -1}, err[2] = {-1, -1};
        if (pipes && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) { perror("pipe2"); return 1; }
        struct request r = {argv + 3, out[1], err[1], group};
        sigset_t all, previous;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &previous);
        int pidfd = -1;
        int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (pidfds ? CLONE_PIDFD : 0);
        pid_t pid = clone(child, stack + sizeof stack, flags, &r, &pidfd);
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
        if (pid < 0) { perror("clone"); return 1; }
        if (pipes) { close(out[1]); close(err[1]); }
        if (pidfds) {
            struct epoll_event event = {.events = EPOLLIN};
            event.data.u64 = 0;
            epoll_ctl(loop, EPOLL_CTL_ADD, pidfd, &event);
            if (pipes) {
                event.data.u64 = 1; epoll_ctl(loop, EPOLL_CTL_ADD, out[0], &event);
                event.data.u64 = 2; epoll_ctl(loop, EPOLL_CTL_ADD, err[0], &event);
            }
            char buffer[4096];
            for (int exited = 0; !exited;) {
                struct epoll_event ready[4];
                int count = epoll_wait(loop, ready, 4, -1);
                for (int k = 0; k < count; k++) {
                    if (ready[k].data.u64 == 0) { exited = 1; continue; }
                    int fd = ready[k].data.u64 == 1 ? out[0] : err[0];
                    if (read(fd, buffer, sizeof buffer) <= 0) epoll_ctl(loop, EPOLL_CTL_DEL, fd, NULL);
                }
            }
        } else if (pipes) {
            /* Without an event loop: read both pipes to their end, then reap. */
            struct pollfd watched[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
            char buffer[4096];
            for (int open = 2; open > 0;) {
                poll(watched, 2, -1);
                for (int k = 0; k < 2; k++)
                    if (watched[k].revents && read(watched[k].fd, buffer, sizeof buffer) <= 0) { watched[k].fd = -1; open--; }
            }
        }
        if (!pidfds) {  /* exited, left a zombie so that its group id is not reused yet */
            siginfo_t info;
            waitid(P_PID, pid, &info, WEXITED | WNOWAIT);
        }
        if (group) kill(-pid, SIGKILL);
        int status;
        if (waitpid(pid, &status, 0) < 0) { perror("waitpid"); return 1; }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures++;
        if (pidfds) close(pidfd);
        if (pipes) { close(out[0]); close(err[0]); }
    }
    if (failures) fprintf(stderr, "supervise: %d of %ld steps failed\n", failures, n);
    return failures ? 1 : 0;
}
