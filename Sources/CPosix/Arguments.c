// The process's own argc/argv, saved before main: the Swift runtime on Linux reads CommandLine.arguments from
// /proc/self/cmdline, which is absent in a bare chroot or a mount namespace with an empty /proc, where
// policyctl would then run with no arguments at all (top-level help, exit 0). glibc and dyld pass
// (argc, argv, envp) to every initializer of the executable and of shared objects; musl passes nothing, and
// then nothing is saved (cposix_saved_argc returns -1) and the caller falls back to CommandLine.arguments.
#include "CPosix.h"

static int saved_argc = -1;
static char **saved_argv = 0;

#if defined(__GLIBC__) || defined(__APPLE__)
__attribute__((constructor))
static void cposix_save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc >= 0 && argv != 0) {
        saved_argc = argc;
        saved_argv = argv;
    }
}
#endif

int cposix_saved_argc(void) { return saved_argc; }

const char *cposix_saved_argv(int index) {
    if (saved_argv == 0 || index < 0 || index >= saved_argc) return 0;
    return saved_argv[index];
}

#if defined(__linux__)
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

// Lives here beside the other process facts; capget has no wrapper in Swift's Glibc module.
int cposix_has_effective_capability(int capability) {
#if defined(__linux__)
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
    if (capability < 0 || capability >= 64) return 0;
    if (syscall(SYS_capget, &header, data) != 0) return -1;
    return (data[capability / 32].effective >> (capability % 32)) & 1;
#else
    (void)capability;
    return 0;
#endif
}
