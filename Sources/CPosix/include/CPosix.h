// What Swift's Glibc module does not expose: the xattr calls and renameat2/RENAME_NOREPLACE.
// Each wrapper returns -1 and leaves errno set on failure, exactly like the call it wraps.
#ifndef CPOSIX_H
#define CPOSIX_H

#include <sys/types.h>
#include <stddef.h>

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

#endif
