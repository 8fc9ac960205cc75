// What Swift's Glibc module does not expose: the xattr calls, renameat2/RENAME_NOREPLACE, statx with the
// mount id, and openat2/RESOLVE_NO_XDEV.
// Each wrapper returns -1 and leaves errno set on failure, exactly like the call it wraps.
#ifndef CPOSIX_H
#define CPOSIX_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

/// Reads an extended attribute of `name` relative to the directory `dirfd`, never following a symlink.
ssize_t cposix_getxattrat(int dirfd, const char *name, const char *attr, void *value, size_t size);
/// Sets an extended attribute; `flags` is 0, CPOSIX_XATTR_CREATE or CPOSIX_XATTR_REPLACE.
int cposix_setxattrat(int dirfd, const char *name, const char *attr, const void *value, size_t size, int flags);
/// Removes an extended attribute.
int cposix_removexattrat(int dirfd, const char *name, const char *attr);
/// Lists extended attribute names (NUL-separated), like llistxattr.
ssize_t cposix_listxattrat(int dirfd, const char *name, char *list, size_t size);
/// Sets an extended attribute on an open file descriptor.
int cposix_fsetxattr(int fd, const char *attr, const void *value, size_t size, int flags);
/// Reads an extended attribute from an open file descriptor.
ssize_t cposix_fgetxattr(int fd, const char *attr, void *value, size_t size);
/// Removes an extended attribute from an open file descriptor.
int cposix_fremovexattr(int fd, const char *attr);

/// renameat2 with RENAME_NOREPLACE when `noreplace` is nonzero; falls back to a link+unlink-free
/// check-then-rename only where the kernel lacks renameat2 (never on Linux >= 3.15).
int cposix_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int noreplace);

/// The argc main received, saved by an initializer before main (Arguments.c); -1 where the C library
/// passes initializers nothing (musl).
int cposix_saved_argc(void);
/// argv[index] as main received it, or NULL outside 0..<argc.
const char *cposix_saved_argv(int index);

/// 1 when this thread's effective capability set holds `capability` (CAP_SYS_PTRACE is 19), 0 when not
/// (always 0 outside Linux), -1 when capget fails.
int cposix_has_effective_capability(int capability);

/// Folds the longest prefix of `bytes` that is a multiple of 16 bytes into the CRC-32 register `*crc` (the IEEE
/// polynomial, reflected; the register as it runs, not inverted at the ends) with carry-less multiplication;
/// returns how many bytes it folded: 0 below 64 bytes, and always 0 where the CPU or the architecture lacks the
/// instruction (CRC32.c). The caller's table code does the rest.
size_t cposix_crc32_fold(uint32_t *crc, const void *bytes, size_t count);

/// The O_NOATIME flag on this platform (0 where it does not exist).
int cposix_o_noatime(void);
/// The O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC|O_RDONLY flag set used to open directories safely.
int cposix_o_directory_flags(void);
/// The O_PATH flag where it exists (0 elsewhere).
int cposix_o_path(void);

#define CPOSIX_XATTR_CREATE 1
#define CPOSIX_XATTR_REPLACE 2

/// One directory entry as the walker needs it: the name bytes, d_type and inode.
typedef struct {
    const char *name;
    unsigned char type;
    unsigned long long ino;
} cposix_dirent;

/// Opens a directory stream over `fd` (which it takes ownership of). NULL on failure with errno set.
void *cposix_fdopendir(int fd);
/// Reads the next entry, skipping "." and "..". Returns 1 with `out` filled, 0 at the end, -1 on error.
int cposix_readdir(void *dir, cposix_dirent *out);
/// Closes a stream opened by cposix_fdopendir (and its descriptor).
int cposix_closedir(void *dir);

/// The magic number of the filesystem holding `fd` (statfs f_type), or -1.
long long cposix_fs_type(int fd);
/// 1 when the mount holding `fd` has noatime or relatime (ST_NOATIME/ST_RELATIME), 0 otherwise, -1 on error.
int cposix_mount_atime_flags(int fd);
/// How the mount holding fd updates access times: 0 strictly, 1 relatime (at most daily), 2 noatime; -1 on error.
/// Linux only (0 elsewhere): on Darwin the mode comes from cposix_mount_flags (Platform/AccessTimeTrust.swift).
int cposix_mount_atime_mode(int fd);
/// The statfs f_flags of the mount holding fd (Darwin: MNT_NOATIME, MNT_STRICTATIME, ...); -1 with errno on
/// error, and ENOSYS outside Darwin.
long long cposix_mount_flags(int fd);

/// One entry's status as statx reports it, plus the id of the mount holding it (0 when unknown).
/// Times are kept as seconds and nanoseconds, exactly as the file system has them (no overflow here).
typedef struct {
    unsigned long long dev, ino, nlink, blocks, mnt_id;
    long long size;
    unsigned int mode, uid, gid;
    long long atime_sec, mtime_sec, ctime_sec;
    unsigned int atime_nsec, mtime_nsec, ctime_nsec;
    /// Birth time (statx STATX_BTIME); has_btime is 0 where the file system does not record one.
    long long btime_sec;
    unsigned int btime_nsec;
    int has_btime;
} cposix_stat;

/// Status of `name` inside `dirfd` without following a symlink; NULL `name` means `dirfd` itself.
/// One statx call asking for STATX_MNT_ID; where the kernel does not fill the mount id (before 5.8), it comes
/// from name_to_handle_at; where statx is missing altogether, from fstatat plus name_to_handle_at.
int cposix_stat_at(int dirfd, const char *name, cposix_stat *out);
/// The mount id of `name` inside `dirfd` (NULL: `dirfd` itself) from name_to_handle_at alone, the fallback
/// cposix_stat_at uses; 0 when the file system cannot say. Exposed so tests can compare the two.
unsigned long long cposix_mount_id_fallback(int dirfd, const char *name);
/// openat2 with RESOLVE_NO_XDEV: fails with EXDEV instead of entering another mount (bind mounts included).
/// Fails with ENOSYS where openat2 does not exist (before Linux 5.6): the caller then checks the mount id itself.
int cposix_openat_same_mount(int dirfd, const char *name, int flags);

/// The ids of the running processes (proc_listallpids, macOS only): at most `capacity` into `pids`. Returns
/// how many there are (more than `capacity`: call again with room for them), or -1 with errno (ENOSYS elsewhere).
int cposix_list_pids(int *pids, int capacity);
/// The device and inode of every vnode process `pid` holds open (proc_pidinfo PROC_PIDLISTFDS, then
/// proc_pidfdinfo PROC_PIDFDVNODEPATHINFO for each vnode descriptor; macOS only). At most `capacity` pairs are
/// stored; returns how many there are (more than `capacity`: call again), or -1 with errno (EPERM: another
/// user's process; ESRCH: exited; ENOSYS elsewhere). A descriptor closed meanwhile is left out.
int cposix_pid_open_vnodes(int pid, unsigned long long *devices, unsigned long long *inodes, int capacity);
/// The path of the folder open as `fd` (fcntl F_GETPATH, Darwin only) into `buffer` (at least MAXPATHLEN,
/// 1024, bytes); 0, or -1 with errno (ENOSYS elsewhere). For the documented backup-exclusion calls, which take paths.
int cposix_fd_path(int fd, char *buffer, int size);
/// The name of process `pid` (proc_name, macOS only) into `buffer`, NUL-terminated; its length, or -1.
int cposix_pid_name(int pid, char *buffer, int size);

/// Gives the free pages of every malloc arena back to the system: glibc's malloc_trim(0), which Swift's Glibc
/// module does not expose; nothing elsewhere.
void cposix_malloc_trim(void);
/// glibc's mallopt(M_ARENA_MAX, count): at most `count` malloc arenas for the process's threads (1 on success,
/// 0 when refused or where there is no such setting).
int cposix_malloc_arena_max(int count);
/// glibc's mallopt(M_MMAP_THRESHOLD, bytes): blocks under `bytes` come from the arena, not each from its own
/// mmap (1 on success, 0 when refused or where there is no such setting).
int cposix_malloc_mmap_threshold(int bytes);

/// Whether the calling thread's system calls are out of the fault-injection seam's count (set and read per
/// thread; 0 until set).
int cposix_fault_exempt(void);
void cposix_set_fault_exempt(int exempt);

// gzip through zlib (Gzip.c): 0 and a malloc'd buffer the caller frees, or -1. `limit` bounds what gunzip makes.
int cposix_gzip(const void *input, size_t length, void **output, size_t *outputLength);
int cposix_gunzip(const void *input, size_t length, size_t limit, void **output, size_t *outputLength);

#endif
