/* nonblock: runs a command with O_NONBLOCK set on the open file description of one of its
 * descriptors, as a parent such as node or a CI runner may leave a pipe it shares, for
 * tests/cli-hostile.sh (no Python in make check).
 * Usage: nonblock [-s] FD COMMAND [ARG]...  Exit 127 when FD cannot be set or COMMAND run.
 *   -s  FD (0 or 1) of the command is one end of a socket pair (a socket cannot be reopened
 *       blocking through /proc, as a pipe can), non-blocking, with a small send buffer;
 *       nonblock is the slow peer: after 0.3 s it copies its own stdin to the socket (FD 0)
 *       or the socket to its own stdout (FD 1), then exits with the command's status
 *       (128 + N when the command was killed by signal N). */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Copies from to to until end of file or an error; partial writes continued. */
static void copy(int from, int to) {
  char buf[8192];
  ssize_t n;
  while ((n = read(from, buf, sizeof buf)) > 0)
    for (ssize_t put = 0, w; put < n; put += w)
      if ((w = write(to, buf + put, (size_t)(n - put))) <= 0) return;
}

static int peer(int fd, char **argv) {
  int sv[2], status, small = 4096;
  pid_t pid;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    perror("nonblock: socketpair");
    return 127;
  }
  signal(SIGPIPE, SIG_IGN); /* a command that stops reading ends the copy, not nonblock */
  if ((pid = fork()) < 0) {
    perror("nonblock: fork");
    return 127;
  }
  if (pid == 0) {
    int fl;
    signal(SIGPIPE, SIG_DFL);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    if (dup2(sv[0], fd) < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
        fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
      perror("nonblock: socket");
      _exit(127);
    }
    close(sv[0]);
    close(sv[1]);
    execvp(argv[0], argv);
    perror("nonblock: exec");
    _exit(127);
  }
  close(sv[0]);
  usleep(300000);
  if (fd == 0) {
    copy(STDIN_FILENO, sv[1]);
    shutdown(sv[1], SHUT_WR);
  } else {
    copy(sv[1], STDOUT_FILENO);
  }
  close(sv[1]);
  if (waitpid(pid, &status, 0) < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
  int fd, fl, sock = argc > 1 && strcmp(argv[1], "-s") == 0;
  argv += sock, argc -= sock;
  if (argc < 3) {
    fprintf(stderr, "usage: nonblock [-s] FD COMMAND [ARG]...\n");
    return 127;
  }
  fd = atoi(argv[1]);
  if (sock) return fd == 0 || fd == 1 ? peer(fd, argv + 2) : 127;
  if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    perror("nonblock: fcntl");
    return 127;
  }
  execvp(argv[2], argv + 2);
  perror("nonblock: exec");
  return 127;
}
