// The macOS process table for the in-use check (Platform/LibprocTable.swift): which vnodes each process holds
// open, through libproc, the interface lsof and Activity Monitor use on Darwin. Read against Apple's
// <libproc.h> and <sys/proc_info.h> (xnu bsd/sys/proc_info.h); not compiled on the Linux machine that builds
// this package, where every call answers ENOSYS and the Swift side reports libproc as unreadable.
#include "CPosix.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__APPLE__)
#include <TargetConditionals.h>
#endif
#if defined(__APPLE__) && TARGET_OS_OSX
#include <libproc.h>
#include <sys/proc_info.h>

int cposix_list_pids(int *pids, int capacity) {
    // proc_listallpids returns a count of pids (not bytes); with too small a buffer it fills it: the caller
    // asks again when the answer equals its capacity.
    int n = proc_listallpids(pids, capacity > 0 ? capacity * (int)sizeof(int) : 0);
    if (n < 0) return -1;
    return n;
}

int cposix_pid_open_vnodes(int pid, unsigned long long *devices, unsigned long long *inodes, int capacity) {
    // First the size of the descriptor list, then the list; a process may open more meanwhile, so room for
    // 32 more is asked for and a full buffer read again.
    int size = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, NULL, 0);
    if (size <= 0) return -1;  // errno set: EPERM (not ours, not root), ESRCH (exited)
    for (;;) {
        int room = size + 32 * (int)sizeof(struct proc_fdinfo);
        struct proc_fdinfo *fds = malloc((size_t)room);
        if (fds == NULL) { errno = ENOMEM; return -1; }
        int used = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, fds, room);
        if (used <= 0) { int e = errno; free(fds); errno = e; return -1; }
        if (used >= room) { free(fds); size = used * 2; continue; }
        int count = 0;
        for (int i = 0; i < used / (int)sizeof(struct proc_fdinfo); i++) {
            if (fds[i].proc_fdtype != PROX_FDTYPE_VNODE) continue;
            struct vnode_fdinfowithpath info;
            int got = proc_pidfdinfo(pid, fds[i].proc_fd, PROC_PIDFDVNODEPATHINFO, &info, PROC_PIDFDVNODEPATHINFO_SIZE);
            if (got < PROC_PIDFDVNODEPATHINFO_SIZE) continue;  // closed meanwhile (EBADF), or not a vnode now
            if (count < capacity) {
                // vst_dev is st_dev's bits as uint32_t; st_dev is a signed dev_t, which cposix_stat_at widens
                // with its sign: widened the same way, the two compare equal.
                devices[count] = (unsigned long long)(long long)(int32_t)info.pvip.vip_vi.vi_stat.vst_dev;
                inodes[count] = (unsigned long long)info.pvip.vip_vi.vi_stat.vst_ino;
            }
            count++;
        }
        free(fds);
        return count;
    }
}

int cposix_pid_name(int pid, char *buffer, int size) {
    if (size <= 0) { errno = EINVAL; return -1; }
    int n = proc_name(pid, buffer, (uint32_t)size);
    if (n <= 0) return -1;
    buffer[n < size ? n : size - 1] = 0;
    return n;
}
#else
int cposix_list_pids(int *pids, int capacity) { (void)pids; (void)capacity; errno = ENOSYS; return -1; }
int cposix_pid_open_vnodes(int pid, unsigned long long *devices, unsigned long long *inodes, int capacity) {
    (void)pid; (void)devices; (void)inodes; (void)capacity; errno = ENOSYS; return -1;
}
int cposix_pid_name(int pid, char *buffer, int size) { (void)pid; (void)buffer; (void)size; errno = ENOSYS; return -1; }
#endif
