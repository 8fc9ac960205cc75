// A kernel without openat2 (before Linux 5.6; and Darwin): the binary run under a seccomp filter that answers
// every openat2 with ENOSYS, so each directory open falls back at run time to openat plus the mount-id check
// (DirectoryHandle.openDirectory). Bind mounts inside the root must be refused exactly as with openat2's
// RESOLVE_NO_XDEV: not entered by the walk, never crossed by apply. The filter is a dozen lines of C compiled here
// with the toolchain's clang; root and bind mounts needed, as for CoTenantMountTests.
import Foundation
import Testing
import TreeFixture

@Suite("no openat2: the run-time fallback (binary, as root)", .serialized)
struct NoOpenat2Tests {
    /// Installs the filter, then runs argv[1...]; `--probe` instead reports whether openat2 now answers ENOSYS.
    static let launcherSource = #"""
        #include <errno.h>
        #include <stddef.h>
        #include <string.h>
        #include <unistd.h>
        #include <fcntl.h>
        #include <linux/audit.h>
        #include <linux/filter.h>
        #include <linux/seccomp.h>
        #include <sys/prctl.h>
        #include <sys/syscall.h>
        #if defined(__x86_64__)
        #define ARCH AUDIT_ARCH_X86_64
        #elif defined(__aarch64__)
        #define ARCH AUDIT_ARCH_AARCH64
        #endif
        #define NR_OPENAT2 437 /* the same number on every architecture */
        int main(int argc, char **argv) {
            struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_OPENAT2, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            };
            struct sock_fprog prog = { sizeof f / sizeof f[0], f };
            if (argc < 2) return 64;
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return 70;
            if (strcmp(argv[1], "--probe") == 0) {
                unsigned long long how[3] = { O_RDONLY | O_DIRECTORY, 0, 0 };
                long r = syscall(NR_OPENAT2, AT_FDCWD, "/", how, sizeof how);
                return r == -1 && errno == ENOSYS ? 0 : 1;
            }
            execv(argv[1], argv + 1);
            return 127;
        }
        """#

    /// The launcher, built once; nil where it cannot be (no clang, not root, no bind mounts).
    static let launcher: String? = {
        guard geteuid() == 0, let clang = clangPath else { return nil }
        let dir = TestScratch.path("no-openat2")
        guard mkdir(dir, 0o755) == 0 else { return nil }
        let source = dir + "/launcher.c", binary = dir + "/launcher"
        guard (try? launcherSource.write(toFile: source, atomically: true, encoding: .utf8)) != nil,
              let built = try? ChildProcess.run(clang, ["-O1", "-o", binary, source]), built.status == 0 else { return nil }
        return binary
    }()

    static let clangPath: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/clang" } + ["/opt/swift/usr/bin/clang", "/usr/bin/clang", "/usr/bin/cc"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var available: Bool { launcher != nil && CoTenantMountTests.canBindMount }

    static func run(_ arguments: [String]) throws -> PolicyctlBinary.Result {
        try ChildProcess.run(try #require(launcher), [PolicyctlBinary.path] + arguments)
    }

    /// ROOT/tmp/old/{junk, mnt/}, ROOT/tmp/stale, all 3 days old; an outside folder of files to bind into mnt.
    static func setUp() throws -> (scratch: ScratchDirectory, root: String, outside: String, policy: String) {
        let scratch = ScratchDirectory("no-openat2")
        let root = scratch.sub("root")
        let outside = scratch.sub("outside")
        for name in ["precious.db", "IMPORTANT.TXT"] {
            #expect(FileManager.default.createFile(atPath: outside + "/" + name, contents: Data("keep me".utf8)))
        }
        let made = try ChildProcess.run("/bin/sh", ["-c", """
            cd '\(root)' && mkdir -p tmp/old/mnt && echo x > tmp/old/junk && echo y > tmp/stale && \
            touch -d '3 days ago' tmp/old/junk tmp/stale tmp/old/mnt tmp/old '\(outside)/precious.db' '\(outside)/IMPORTANT.TXT'
            """])
        #expect(made.status == 0, "\(made.stderr)")
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")
        return (scratch, root, outside, policy)
    }

    static func outsideNames(_ outside: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: outside)) ?? []).sorted()
    }

    @Test("the filter works: openat2 answers ENOSYS under it", .enabled(if: NoOpenat2Tests.launcher != nil))
    func probe() throws {
        let r = try ChildProcess.run(try #require(Self.launcher), ["--probe"])
        #expect(r.status == 0, "openat2 did not answer ENOSYS under the filter (\(r.status))")
    }

    @Test("without openat2, the walk does not enter a bind mount and apply leaves the mounted folder whole",
          .enabled(if: NoOpenat2Tests.available))
    func walkAndApply() throws {
        let (scratch, root, outside, policy) = try Self.setUp()
        let mountPoint = root + "/tmp/old/mnt"
        try CoTenantMountTests.bind(outside, mountPoint)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }

        let plan = try Self.run(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        let json = try PlanJSON(Data(plan.stdout.utf8))
        #expect(json.lines.sorted() == ["delete tmp/old/junk", "delete tmp/stale"])
        #expect(json.skippedLines == ["tmp/old/mnt: mount point; not entered"])

        let apply = try Self.run(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0 || apply.status == 1, "\(apply.stdout)\(apply.stderr)")
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "precious.db"])
        #expect(FileManager.default.fileExists(atPath: mountPoint + "/precious.db"), "still mounted, still there")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/stale"))
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/old/junk"))
        _ = scratch
    }

    @Test("without openat2, a bind mount made between plan and apply is never crossed: the folder delete is kept",
          .enabled(if: NoOpenat2Tests.available))
    func mountAfterPlan() throws {
        let (scratch, root, outside, policy) = try Self.setUp()
        _ = try ChildProcess.run("/bin/sh", ["-c", "rm '\(root)/tmp/old/junk' '\(root)/tmp/stale' && touch -d '3 days ago' '\(root)/tmp/old'"])
        let planFile = scratch.path + "/plan.json"
        let plan = try Self.run(["plan", "--policy", policy, "--root", root, "--out", planFile])
        #expect(plan.status == 0, "\(plan.stderr)")
        let mountPoint = root + "/tmp/old/mnt"
        try CoTenantMountTests.bind(outside, mountPoint)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        let apply = try Self.run(["apply", planFile, "--yes"])
        #expect((apply.stdout + apply.stderr).contains("holds a mount point (tmp/old/mnt); never crossed"), "\(apply.stdout)\(apply.stderr)")
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "precious.db"])
        #expect(FileManager.default.fileExists(atPath: mountPoint + "/precious.db"))
        _ = scratch
    }
}
