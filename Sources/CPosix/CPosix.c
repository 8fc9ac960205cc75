// Thin wrappers over calls Swift's Glibc module lacks. No policy here: errno is left for Swift to type.
#define _GNU_SOURCE
#include "CPosix.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#if defined(__linux__)
#include <sys/xattr.h>
#include <sys/vfs.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <sys/xattr.h>
#include <sys/mount.h>
#include <sys/param.h>
#endif

#if defined(__linux__)
// The *at xattr calls do not exist before Linux 6.13; /proc/self/fd/N/name reaches the entry
// relative to the directory without resolving a symlink in the last component (l*xattr).
static int path_in(int dirfd, const char *name, char *buf, size_t size) {
    int n = snprintf(buf, size, "/proc/self/fd/%d/%s", dirfd, name);
    if (n < 0 || (size_t)n >= size) { errno = ENAMETOOLONG; return -1; }
    return 0;
}
#endif

ssize_t cposix_getxattrat(int dirfd, const char *name, const char *attr, void *value, size_t size) {
#if defined(__linux__)
    char p[4400];
    if (path_in(dirfd, name, p, sizeof p) != 0) return -1;
    return lgetxattr(p, attr, value, size);
#elif defined(__APPLE__)
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_SYMLINK);
    if (fd < 0) return -1;
    ssize_t r = fgetxattr(fd, attr, value, size, 0, 0);
    int e = errno; close(fd); errno = e;
    return r;
#else
    errno = ENOTSUP; return -1;
#endif
}

int cposix_setxattrat(int dirfd, const char *name, const char *attr, const void *value, size_t size, int flags) {
    int f = (flags & CPOSIX_XATTR_CREATE ? XATTR_CREATE : 0) | (flags & CPOSIX_XATTR_REPLACE ? XATTR_REPLACE : 0);
#if defined(__linux__)
    char p[4400];
    if (path_in(dirfd, name, p, sizeof p) != 0) return -1;
    return lsetxattr(p, attr, value, size, f);
#elif defined(__APPLE__)
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_SYMLINK);
    if (fd < 0) return -1;
    int r = fsetxattr(fd, attr, value, size, 0, f);
    int e = errno; close(fd); errno = e;
    return r;
#else
    errno = ENOTSUP; return -1;
#endif
}

int cposix_removexattrat(int dirfd, const char *name, const char *attr) {
#if defined(__linux__)
    char p[4400];
    if (path_in(dirfd, name, p, sizeof p) != 0) return -1;
    return lremovexattr(p, attr);
#elif defined(__APPLE__)
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_SYMLINK);
    if (fd < 0) return -1;
    int r = fremovexattr(fd, attr, 0);
    int e = errno; close(fd); errno = e;
    return r;
#else
    errno = ENOTSUP; return -1;
#endif
}

ssize_t cposix_listxattrat(int dirfd, const char *name, char *list, size_t size) {
#if defined(__linux__)
    char p[4400];
    if (path_in(dirfd, name, p, sizeof p) != 0) return -1;
    return llistxattr(p, list, size);
#elif defined(__APPLE__)
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_SYMLINK);
    if (fd < 0) return -1;
    ssize_t r = flistxattr(fd, list, size, 0);
    int e = errno; close(fd); errno = e;
    return r;
#else
    errno = ENOTSUP; return -1;
#endif
}

int cposix_fsetxattr(int fd, const char *attr, const void *value, size_t size, int flags) {
    int f = (flags & CPOSIX_XATTR_CREATE ? XATTR_CREATE : 0) | (flags & CPOSIX_XATTR_REPLACE ? XATTR_REPLACE : 0);
#if defined(__APPLE__)
    return fsetxattr(fd, attr, value, size, 0, f);
#else
    return fsetxattr(fd, attr, value, size, f);
#endif
}

ssize_t cposix_fgetxattr(int fd, const char *attr, void *value, size_t size) {
#if defined(__APPLE__)
    return fgetxattr(fd, attr, value, size, 0, 0);
#else
    return fgetxattr(fd, attr, value, size);
#endif
}

int cposix_fremovexattr(int fd, const char *attr) {
#if defined(__APPLE__)
    return fremovexattr(fd, attr, 0);
#else
    return fremovexattr(fd, attr);
#endif
}

int cposix_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int noreplace) {
#if defined(__linux__)
    unsigned int flags = noreplace ? RENAME_NOREPLACE : 0;
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#elif defined(__APPLE__)
    return renameatx_np(olddirfd, oldpath, newdirfd, newpath, noreplace ? RENAME_EXCL : 0);
#else
    if (noreplace) { errno = ENOTSUP; return -1; }
    return renameat(olddirfd, oldpath, newdirfd, newpath);
#endif
}

int cposix_o_noatime(void) {
#if defined(O_NOATIME)
    return O_NOATIME;
#else
    return 0;
#endif
}

int cposix_o_directory_flags(void) { return O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC; }

int cposix_o_path(void) {
#if defined(O_PATH)
    return O_PATH;
#else
    return 0;
#endif
}

void *cposix_fdopendir(int fd) {
    DIR *d = fdopendir(fd);
    // A duplicated descriptor shares its offset with the original: start from the first entry.
    if (d) rewinddir(d);
    return d;
}

int cposix_readdir(void *dir, cposix_dirent *out) {
    for (;;) {
        errno = 0;
        struct dirent *d = readdir((DIR *)dir);
        if (d == NULL) return errno ? -1 : 0;
        if (d->d_name[0] == '.' && (d->d_name[1] == 0 || (d->d_name[1] == '.' && d->d_name[2] == 0))) continue;
        out->name = d->d_name;
        out->type = d->d_type;
        out->ino = (unsigned long long)d->d_ino;
        return 1;
    }
}

int cposix_closedir(void *dir) { return closedir((DIR *)dir); }

long long cposix_fs_type(int fd) {
#if defined(__linux__)
    struct statfs s;
    if (fstatfs(fd, &s) != 0) return -1;
    return (long long)s.f_type;
#else
    (void)fd; return -1;
#endif
}

int cposix_mount_atime_flags(int fd) {
#if defined(__linux__)
    struct statvfs s;
    if (fstatvfs(fd, &s) != 0) return -1;
    return (s.f_flag & (ST_NOATIME | ST_RELATIME)) ? 1 : 0;
#else
    (void)fd; return 0;
#endif
}
