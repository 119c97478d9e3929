/*
 * Moves the wall clock of the process it is preloaded into (LD_PRELOAD): clock_gettime of the
 * CLOCK_REALTIME clocks, gettimeofday and time read the kernel's clock plus an offset in
 * microseconds, written as a decimal number in the file named by REDLOCKD_CLOCK_OFFSET_FILE.
 * The file is looked at on every read and read again when it is replaced (write a new file and
 * rename it over the old one), so a test steps a running redis-server's clock at will. The
 * monotonic clocks are left alone. No dlsym, no stdio, no malloc: the real clock comes from the
 * system call itself, so nothing here can recurse into a preloaded allocator (libfaketime hung
 * Debian's redis-server, whose jemalloc reads the clock).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset_us;
static ino_t seen_ino;
static struct timespec seen_mtime;

static void refresh(void) {
  const char *path = getenv("REDLOCKD_CLOCK_OFFSET_FILE");
  struct stat st;
  if (path == NULL || stat(path, &st) != 0) {
    return;
  }
  if (st.st_ino == seen_ino && st.st_mtim.tv_sec == seen_mtime.tv_sec && st.st_mtim.tv_nsec == seen_mtime.tv_nsec) {
    return;
  }
  char text[32];
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    return;
  }
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) {
    return;
  }
  text[n] = 0;
  offset_us = strtoll(text, NULL, 10);
  seen_ino = st.st_ino;
  seen_mtime = st.st_mtim;
}

static void shift(struct timespec *ts) {
  refresh();
  long long ns = (long long) ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_us * 1000LL;
  ts->tv_sec = ns / 1000000000LL;
  ts->tv_nsec = ns % 1000000000LL;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
  int rc = (int) syscall(SYS_clock_gettime, clock, ts);
  if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    shift(ts);
  }
  return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void) tz;
  struct timespec ts;
  int rc = (int) syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  if (rc == 0) {
    shift(&ts);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return rc;
}

time_t time(time_t *out) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  shift(&ts);
  if (out != NULL) {
    *out = ts.tv_sec;
  }
  return ts.tv_sec;
}
