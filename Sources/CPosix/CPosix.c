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
#include <sys/sysmacros.h>
#include <stdint.h>
// openat2(2) came with Linux 5.6; distributions whose kernel headers are older (Amazon Linux 2, RHEL 8,
// Ubuntu 20.04) lack the header. The ABI is fixed, so it is spelled out here, and a kernel without the call
// answers ENOSYS, which sends callers to openat and a mount-id check (DirectoryHandle.openDirectory).
#if defined(__has_include) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };
#define RESOLVE_NO_XDEV 0x01
#endif
#if !defined(SYS_openat2)
// The same number on every architecture: system calls added since 5.1 share one table.
#define SYS_openat2 437
#endif
#elif defined(__APPLE__)
#include <TargetConditionals.h>
#include <limits.h>
#include <sys/xattr.h>
#include <sys/mount.h>
#include <sys/param.h>
#endif

#if defined(__linux__)
// The *at xattr calls do not exist before Linux 6.13; /proc/self/fd/N/name reaches the entry
// relative to the directory without resolving a symlink in the last component (l*xattr). The entry itself is
// never opened: no read permission is needed beyond what the xattr namespace asks (root reads a mode-000
// file's), a FIFO cannot block and a device node's driver is never called.
static int path_in(int dirfd, const char *name, char *buf, size_t size) {
    int n = snprintf(buf, size, "/proc/self/fd/%d/%s", dirfd, name);
    if (n < 0 || (size_t)n >= size) { errno = ENAMETOOLONG; return -1; }
    return 0;
}
#endif

#if defined(__APPLE__)
// Darwin has no *at xattr calls and no /proc. Opening the entry to reach f*xattr would need read permission
// and would open device nodes and FIFOs, so the path calls run instead, with XATTR_NOFOLLOW, on the bare name
// resolved against the folder's descriptor. On macOS the calling thread's working directory is that folder for
// the one call (pthread_fchdir_np: in libsystem_pthread since macOS 10.12, absent from the SDK's headers, so
// declared here and weakly linked; -1 puts the thread back on the process's directory): a folder renamed or
// swapped for a symlink meanwhile cannot redirect it, as for the *at calls. On iOS, whose sandbox lets no other
// writer into the app's container, the folder's own path (F_GETPATH) and the name are used, with no private
// interface. The folder itself (name ".") goes through the f*xattr calls on its own descriptor.
#if TARGET_OS_OSX
extern int pthread_fchdir_np(int fd) __attribute__((weak_import));
#endif

typedef struct { char path[PATH_MAX + 256]; int entered; } darwin_at;

static void darwin_leave(darwin_at *at) {
#if TARGET_OS_OSX
    if (at->entered) { int e = errno; (void)pthread_fchdir_np(-1); errno = e; }
#else
    (void)at;
#endif
}

// Fills at->path with what the path call is given: the bare name (macOS, the thread now in the folder) or the
// folder's path and the name (iOS). Every success must be followed by darwin_leave.
static int darwin_enter(int dirfd, const char *name, darwin_at *at) {
    at->entered = 0;
    if (strlen(name) + 1 > sizeof at->path) { errno = ENAMETOOLONG; return -1; }
#if TARGET_OS_OSX
    if (pthread_fchdir_np == NULL) { errno = ENOTSUP; return -1; }
    if (pthread_fchdir_np(dirfd) != 0) return -1;
    at->entered = 1;
    strcpy(at->path, name);
    return 0;
#else
    char dir[PATH_MAX];
    if (fcntl(dirfd, F_GETPATH, dir) != 0) return -1;
    int n = snprintf(at->path, sizeof at->path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof at->path) { errno = ENAMETOOLONG; return -1; }
    return 0;
#endif
}

static int darwin_is_self(const char *name) { return name[0] == '.' && name[1] == 0; }
#endif

ssize_t cposix_getxattrat(int dirfd, const char *name, const char *attr, void *value, size_t size) {
#if defined(__linux__)
    char p[4400];
    if (path_in(dirfd, name, p, sizeof p) != 0) return -1;
    return lgetxattr(p, attr, value, size);
#elif defined(__APPLE__)
    if (darwin_is_self(name)) return fgetxattr(dirfd, attr, value, size, 0, 0);
    darwin_at at;
    if (darwin_enter(dirfd, name, &at) != 0) return -1;
    ssize_t r = getxattr(at.path, attr, value, size, 0, XATTR_NOFOLLOW);
    darwin_leave(&at);
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
    if (darwin_is_self(name)) return fsetxattr(dirfd, attr, value, size, 0, f);
    darwin_at at;
    if (darwin_enter(dirfd, name, &at) != 0) return -1;
    int r = setxattr(at.path, attr, value, size, 0, f | XATTR_NOFOLLOW);
    darwin_leave(&at);
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
    if (darwin_is_self(name)) return fremovexattr(dirfd, attr, 0);
    darwin_at at;
    if (darwin_enter(dirfd, name, &at) != 0) return -1;
    int r = removexattr(at.path, attr, XATTR_NOFOLLOW);
    darwin_leave(&at);
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
    if (darwin_is_self(name)) return flistxattr(dirfd, list, size, 0);
    darwin_at at;
    if (darwin_enter(dirfd, name, &at) != 0) return -1;
    ssize_t r = listxattr(at.path, list, size, XATTR_NOFOLLOW);
    darwin_leave(&at);
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

int cposix_fd_path(int fd, char *buffer, int size) {
#if defined(__APPLE__)
    if (size < MAXPATHLEN) { errno = ERANGE; return -1; }
    return fcntl(fd, F_GETPATH, buffer) == -1 ? -1 : 0;
#else
    (void)fd; (void)buffer; (void)size; errno = ENOSYS; return -1;
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

int cposix_mount_atime_mode(int fd) {
#if defined(__linux__)
    struct statvfs s;
    if (fstatvfs(fd, &s) != 0) return -1;
    if (s.f_flag & ST_NOATIME) return 2;
    return (s.f_flag & ST_RELATIME) ? 1 : 0;
#else
    (void)fd; return 0;
#endif
}

long long cposix_mount_flags(int fd) {
#if defined(__APPLE__)
    struct statfs s;
    if (fstatfs(fd, &s) != 0) return -1;
    return (long long)(unsigned long long)s.f_flags;
#else
    (void)fd; errno = ENOSYS; return -1;
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

#if defined(__linux__)
unsigned long long cposix_mount_id_fallback(int dirfd, const char *name) {
    union { struct file_handle h; unsigned char bytes[sizeof(struct file_handle) + MAX_HANDLE_SZ]; } handle;
    handle.h.handle_bytes = MAX_HANDLE_SZ;
    int mount_id = 0;
    int flags = (name == NULL || name[0] == 0) ? AT_EMPTY_PATH : 0;
    // No AT_SYMLINK_FOLLOW: a symlink names itself. EOVERFLOW still reports the mount id.
    if (name_to_handle_at(dirfd, name ? name : "", &handle.h, &mount_id, flags) != 0 && errno != EOVERFLOW) return 0;
    return mount_id > 0 ? (unsigned long long)mount_id : 0;
}
#else
unsigned long long cposix_mount_id_fallback(int dirfd, const char *name) { (void)dirfd; (void)name; return 0; }
#endif

static void from_stat(const struct stat *s, cposix_stat *out) {
    out->dev = (unsigned long long)s->st_dev; out->ino = (unsigned long long)s->st_ino;
    out->nlink = (unsigned long long)s->st_nlink; out->blocks = (unsigned long long)s->st_blocks;
    out->size = (long long)s->st_size; out->mode = (unsigned int)s->st_mode; out->uid = (unsigned int)s->st_uid;
    out->gid = (unsigned int)s->st_gid;
    out->has_btime = 0; out->btime_sec = 0; out->btime_nsec = 0;  // stat has no birth time here
#if defined(__APPLE__)
    // Darwin's stat has the birth time Linux only gives through statx.
    out->has_btime = 1; out->btime_sec = s->st_birthtimespec.tv_sec;
    out->btime_nsec = (unsigned int)s->st_birthtimespec.tv_nsec;
    out->atime_sec = s->st_atimespec.tv_sec; out->atime_nsec = (unsigned int)s->st_atimespec.tv_nsec;
    out->mtime_sec = s->st_mtimespec.tv_sec; out->mtime_nsec = (unsigned int)s->st_mtimespec.tv_nsec;
    out->ctime_sec = s->st_ctimespec.tv_sec; out->ctime_nsec = (unsigned int)s->st_ctimespec.tv_nsec;
#else
    out->atime_sec = s->st_atim.tv_sec; out->atime_nsec = (unsigned int)s->st_atim.tv_nsec;
    out->mtime_sec = s->st_mtim.tv_sec; out->mtime_nsec = (unsigned int)s->st_mtim.tv_nsec;
    out->ctime_sec = s->st_ctim.tv_sec; out->ctime_nsec = (unsigned int)s->st_ctim.tv_nsec;
#endif
}

int cposix_stat_at(int dirfd, const char *name, cposix_stat *out) {
#if defined(__APPLE__)
    // No statx, no AT_EMPTY_PATH and no mount id on Darwin: fstat for the directory itself, fstatat otherwise.
    struct stat ds;
    if ((name ? fstatat(dirfd, name, &ds, AT_SYMLINK_NOFOLLOW) : fstat(dirfd, &ds)) != 0) return -1;
    from_stat(&ds, out);
    out->mnt_id = 0;
    return 0;
#else
    const char *path = name ? name : "";
    int flags = AT_SYMLINK_NOFOLLOW | (name ? 0 : AT_EMPTY_PATH);
#if defined(__linux__) && defined(STATX_MNT_ID)
    static int no_statx = 0;
    if (!__atomic_load_n(&no_statx, __ATOMIC_RELAXED)) {
        struct statx x;
        if (statx(dirfd, path, flags | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME | STATX_MNT_ID, &x) == 0) {
            out->dev = (unsigned long long)makedev(x.stx_dev_major, x.stx_dev_minor);
            out->ino = x.stx_ino; out->nlink = x.stx_nlink; out->blocks = x.stx_blocks;
            out->size = (long long)x.stx_size; out->mode = x.stx_mode; out->uid = x.stx_uid;
            out->gid = x.stx_gid;
            out->atime_sec = x.stx_atime.tv_sec; out->atime_nsec = x.stx_atime.tv_nsec;
            out->mtime_sec = x.stx_mtime.tv_sec; out->mtime_nsec = x.stx_mtime.tv_nsec;
            out->ctime_sec = x.stx_ctime.tv_sec; out->ctime_nsec = x.stx_ctime.tv_nsec;
            out->has_btime = (x.stx_mask & STATX_BTIME) ? 1 : 0;
            out->btime_sec = out->has_btime ? x.stx_btime.tv_sec : 0;
            out->btime_nsec = out->has_btime ? x.stx_btime.tv_nsec : 0;
            out->mnt_id = (x.stx_mask & STATX_MNT_ID) ? x.stx_mnt_id : cposix_mount_id_fallback(dirfd, name);
            return 0;
        }
        if (errno != ENOSYS) return -1;
        __atomic_store_n(&no_statx, 1, __ATOMIC_RELAXED);
    }
#endif
    struct stat s;
    if (fstatat(dirfd, path, &s, flags) != 0) return -1;
    from_stat(&s, out);
    out->mnt_id = cposix_mount_id_fallback(dirfd, name);
    return 0;
#endif
}

int cposix_openat_same_mount(int dirfd, const char *name, int flags) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(unsigned int)flags;
    how.resolve = RESOLVE_NO_XDEV;
    long r = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
    return r >= 0 ? (int)r : -1;
#else
    (void)dirfd; (void)name; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

#if defined(__GLIBC__)
#include <malloc.h>
void cposix_malloc_trim(void) { (void)malloc_trim(0); }
int cposix_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }
int cposix_malloc_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
#else
void cposix_malloc_trim(void) {}
int cposix_malloc_arena_max(int count) { (void)count; return 0; }
int cposix_malloc_mmap_threshold(int bytes) { (void)bytes; return 0; }
#endif

/* Per thread, for the fault-injection seam (SystemCall.swift): while set, this thread's calls are neither
   counted nor failed. C's _Thread_local, as Swift has no thread-local storage of its own. */
static _Thread_local int fault_exempt;
int cposix_fault_exempt(void) { return fault_exempt; }
void cposix_set_fault_exempt(int exempt) { fault_exempt = exempt; }
