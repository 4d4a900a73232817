/* nonblock: runs a command with O_NONBLOCK set on the open file description of one of its
 * descriptors, as a parent such as node or a CI runner may leave a pipe it shares, for
 * tests/cli-hostile.sh (no Python in make check).
 * Usage: nonblock FD COMMAND [ARG]...  Exit 127 when FD cannot be set or COMMAND run. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int fd, fl;
  if (argc < 3) {
    fprintf(stderr, "usage: nonblock FD COMMAND [ARG]...\n");
    return 127;
  }
  fd = atoi(argv[1]);
  if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    perror("nonblock: fcntl");
    return 127;
  }
  execvp(argv[2], argv + 2);
  perror("nonblock: exec");
  return 127;
}
