/* Overlap floor: does work done after a spawn, while the child runs, cost a sequence
 * nothing? `overlap N BEFORE_US AFTER_US [--other-cpu]` runs /bin/true N times one after
 * another with posix_spawn and waitpid, spinning BEFORE_US microseconds before each
 * spawn (on the path from one child's exit to the next spawn) and AFTER_US after it
 * (while the child execs and runs), and prints the microseconds a step took. With
 * --other-cpu the runner stays on CPU 0 and moves each child to CPU 1 right after its
 * spawn, so that the two cannot share a core. See bench/README.md ("Measured: work after
 * the spawn is not free"). */
#define _GNU_SOURCE
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void spin(double us) {
    double end = now() + us / 1e6;
    while (now() < end) {}
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: overlap N BEFORE_US AFTER_US [--other-cpu]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    double before = atof(argv[2]), after = atof(argv[3]);
    int other = argc > 4 && strcmp(argv[4], "--other-cpu") == 0;
    cpu_set_t cpu0, cpu1;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    CPU_ZERO(&cpu1);
    CPU_SET(1, &cpu1);
    if (other && sched_setaffinity(0, sizeof cpu0, &cpu0) != 0) { perror("sched_setaffinity"); return 1; }
    char *args[] = {"/bin/true", NULL};
    double start = now();
    for (int i = 0; i < n; i++) {
        spin(before);
        pid_t pid;
        if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0) { perror("posix_spawn"); return 1; }
        if (other) sched_setaffinity(pid, sizeof cpu1, &cpu1);
        spin(after);
        int status;
        if (waitpid(pid, &status, 0) != pid) { perror("waitpid"); return 1; }
    }
    printf("%.1f\n", (now() - start) / n * 1e6);
    return 0;
}
