/*
 * Process floor: start N copies of one command with posix_spawn and wait
 * for all of them. This is the least work any runner must do to run N
 * steps; flow and its peers are compared against it.
 *
 *   spawn sequential N [--sh] CMD [ARG...]   one after another
 *   spawn concurrent N [--sh] CMD [ARG...]   all at once, then wait for all
 *
 * Without --sh, CMD is looked up in PATH and exec'd directly (posix_spawnp).
 * With --sh, the remaining words are joined by spaces and run as
 * `/bin/sh -c "CMD ARG..."`, as a runner's `shell:` step would be.
 *
 * Children inherit stdin/stdout/stderr. Exit status: 0 if every child
 * exited 0, else 1 (the first failure is reported on stderr).
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void usage(void)
{
    fprintf(stderr, "usage: spawn sequential|concurrent N [--sh] CMD [ARG...]\n");
    exit(2);
}

static int failed = 0;

static void check(pid_t pid, int status)
{
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        if (!failed)
            fprintf(stderr, "spawn: child %d %s %d\n", (int)pid,
                    WIFEXITED(status) ? "exited with" : "killed by signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        failed = 1;
    }
}

int main(int argc, char **argv)
{
    if (argc < 4)
        usage();
    int concurrent;
    if (strcmp(argv[1], "sequential") == 0)
        concurrent = 0;
    else if (strcmp(argv[1], "concurrent") == 0)
        concurrent = 1;
    else
        usage();
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*end || n < 0)
        usage();

    int first = 3;
    int use_sh = 0;
    if (strcmp(argv[first], "--sh") == 0) {
        use_sh = 1;
        first++;
    }
    if (first >= argc)
        usage();

    char **child_argv;
    char *sh_argv[4];
    if (use_sh) {
        size_t len = 0;
        for (int i = first; i < argc; i++)
            len += strlen(argv[i]) + 1;
        char *script = malloc(len + 1);
        script[0] = '\0';
        for (int i = first; i < argc; i++) {
            if (i > first)
                strcat(script, " ");
            strcat(script, argv[i]);
        }
        sh_argv[0] = "/bin/sh";
        sh_argv[1] = "-c";
        sh_argv[2] = script;
        sh_argv[3] = NULL;
        child_argv = sh_argv;
    } else {
        child_argv = &argv[first];
    }

    long running = 0;
    for (long i = 0; i < n; i++) {
        pid_t pid;
        int rc = posix_spawnp(&pid, child_argv[0], NULL, NULL, child_argv, environ);
        if (rc != 0) {
            fprintf(stderr, "spawn: %s: %s\n", child_argv[0], strerror(rc));
            failed = 1;
            break;
        }
        if (concurrent) {
            running++;
        } else {
            int status;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            check(pid, status);
        }
    }
    while (running > 0) {
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        check(pid, status);
        running--;
    }
    return failed;
}
