// The path to a root chased from "/" on descriptors (PathChase): which symlinks are followed (root's or the
// euid's in folders only they own; a user's own inside that user's folders) and which are refused, naming the
// link and its owner; the exposure note for a path through a folder someone else can change. Real folders under
// the test scratch folder, given owners with chown (the tests run as root; skipped otherwise).
import Foundation
import Testing
import TreeFixture
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Chasing the path to a root (PathChase)", .enabled(if: getuid() == 0))
struct PathChaseTests {
    static let user: uid_t = 12345, other: uid_t = 4242

    /// A scratch folder (root's, 0755) with `make` run in it; its path.
    func scratch(_ label: String) throws -> String {
        let path = TestScratch.path("chase-\(label)")
        #expect(mkdir(path, 0o755) == 0)
        chmod(path, 0o755)
        return path
    }

    func folder(_ path: String, owner: uid_t = 0, mode: mode_t = 0o755) {
        mkdir(path, mode)
        chmod(path, mode)
        chown(path, owner, owner)
    }

    func link(_ path: String, to target: String, owner: uid_t = 0) {
        symlink(target, path)
        lchown(path, owner, owner)
    }

    func refusal(_ path: String) -> String? {
        do {
            _ = try PathChase.directory(path)
            return nil
        } catch {
            if case .refused(let why) = error.operation { return why }
            return "errno \(error.errno)"
        }
    }

    @Test("root's symlinks in root's folders are followed, absolute or relative; the last component never is")
    func trustedLinks() throws {
        let top = try scratch("trusted")
        folder(top + "/real")
        folder(top + "/real/cache")
        link(top + "/abs", to: top + "/real")
        link(top + "/rel", to: "real")
        let viaAbsolute = try PathChase.directory(top + "/abs/cache")
        #expect(try viaAbsolute.handle.status().inode == (try PathChase.directory(top + "/real/cache").handle.status().inode))
        #expect(viaAbsolute.canonical == top + "/real/cache")
        #expect(viaAbsolute.exposure == nil)
        #expect(try PathChase.directory(top + "/rel/cache").canonical == top + "/real/cache")
        #expect(try PathChase.directory(top + "/real/../real/cache").canonical == top + "/real/cache")
        // The root itself a symlink: never followed (ENOTDIR, as before).
        link(top + "/last", to: top + "/real/cache")
        #expect(refusal(top + "/last") == "errno \(Errno.notDirectory)")
    }

    @Test("a co-tenant's symlink in its own folder leading to another user's folder or to '/' is refused, naming the link and its owner")
    func coTenantLinkOut() throws {
        let top = try scratch("out")
        folder(top + "/shared")
        folder(top + "/shared/team", owner: Self.user)
        folder(top + "/victim", owner: Self.other)
        folder(top + "/victim/cache", owner: Self.other)
        link(top + "/shared/team/app", to: top + "/victim", owner: Self.user)
        let absolute = try #require(refusal(top + "/shared/team/app/cache"))
        #expect(absolute.contains("refusing to follow the symlink \(top)/shared/team/app, owned by uid 12345"), "\(absolute)")
        #expect(absolute.contains("starts again at '/'") && absolute.contains("fix:"), "\(absolute)")
        unlink(top + "/shared/team/app")
        link(top + "/shared/team/app", to: "../../victim", owner: Self.user)
        let climbing = try #require(refusal(top + "/shared/team/app/cache"))
        #expect(climbing.contains("leads with '..'") && climbing.contains("out of uid 12345's folders"), "\(climbing)")
        // Into another user's folder inside the co-tenant's own: refused too.
        folder(top + "/shared/team/theirs", owner: Self.other)
        folder(top + "/shared/team/theirs/cache", owner: Self.other)
        unlink(top + "/shared/team/app")
        link(top + "/shared/team/app", to: "theirs", owner: Self.user)
        let sideways = try #require(refusal(top + "/shared/team/app/cache"))
        #expect(sideways.contains("owned by uid 4242, out of uid 12345's folders"), "\(sideways)")
    }

    @Test("a co-tenant's symlink within its own folders is followed, and the root is noted as reachable by other users")
    func coTenantLinkWithin() throws {
        let top = try scratch("within")
        folder(top + "/shared")
        folder(top + "/shared/team", owner: Self.user)
        folder(top + "/shared/team/real", owner: Self.user)
        folder(top + "/shared/team/real/cache", owner: Self.user)
        link(top + "/shared/team/app", to: "real", owner: Self.user)
        let chased = try PathChase.directory(top + "/shared/team/app/cache")
        #expect(chased.canonical == top + "/shared/team/real/cache")
        #expect(chased.exposure == PathExposure(folder: top + "/shared/team", owner: Self.user, mode: 0o755),
                "\(String(describing: chased.exposure))")
        // A root-owned folder the co-tenant placed nowhere: its path through the co-tenant's folder is still exposed.
        folder(top + "/shared/team/rootmade")
        #expect(try PathChase.directory(top + "/shared/team/rootmade").exposure?.owner == Self.user)
    }

    @Test("no symlink is followed below a folder others can write; a sticky root folder (/tmp) is fine; links of others there are refused")
    func writableFolders() throws {
        let top = try scratch("writable")
        folder(top + "/real")
        folder(top + "/real/sub")
        folder(top + "/group", mode: 0o775)
        link(top + "/group/link", to: top + "/real")
        let grouped = try #require(refusal(top + "/group/link/sub"))
        #expect(grouped.contains("it lies below \(top)/group (owner uid 0, mode 0775), which users other than its owner can write"), "\(grouped)")
        folder(top + "/sticky", mode: 0o1777)
        link(top + "/sticky/mine", to: top + "/real")
        #expect(refusal(top + "/sticky/mine/sub") == nil)
        #expect(try PathChase.directory(top + "/sticky/mine/sub").exposure == nil)
        link(top + "/sticky/theirs", to: top + "/real", owner: Self.user)
        let theirs = try #require(refusal(top + "/sticky/theirs/sub"))
        #expect(theirs.contains("owned by uid 12345: its folder is owned by uid 0"), "\(theirs)")
        // A root's symlink whose folder is the co-tenant's: refused (the co-tenant could have swapped it in).
        folder(top + "/cotenant", owner: Self.user)
        folder(top + "/cotenant/in")
        link(top + "/cotenant/in/link", to: top + "/real")
        let above = try #require(refusal(top + "/cotenant/in/link/sub"))
        #expect(above.contains("\(top)/cotenant above it is owned by uid 12345"), "\(above)")
    }

    @Test("a folder others can write on the way is the exposure; the root itself being shared is not")
    func exposure() throws {
        let top = try scratch("exposure")
        folder(top + "/open", mode: 0o777)
        folder(top + "/open/root", mode: 0o1777)
        #expect(try PathChase.directory(top + "/open/root").exposure?.folder == top + "/open")
        folder(top + "/closed")
        folder(top + "/closed/root", mode: 0o1777)
        #expect(try PathChase.directory(top + "/closed/root").exposure == nil)
    }

    @Test("makeDirectories makes the missing folders on descriptors and refuses a path through a co-tenant's symlink")
    func makeDirectories() throws {
        let top = try scratch("mkdir")
        let made = try PathChase.makeDirectories(top + "/a/b/c", permissions: 0o700)
        #expect(made.canonical == top + "/a/b/c")
        var s = stat()
        #expect(lstat(top + "/a/b", &s) == 0 && s.st_mode & 0o7777 == 0o700 && s.st_uid == 0)
        folder(top + "/team", owner: Self.user)
        folder(top + "/elsewhere")
        link(top + "/team/state", to: top + "/elsewhere", owner: Self.user)
        do {
            try PathChase.makeDirectories(top + "/team/state/x", permissions: 0o700)
            Issue.record("a path through the co-tenant's symlink to root's folder was followed")
        } catch {
            #expect(error.reason.contains("refusing to follow the symlink \(top)/team/state, owned by uid 12345"), "\(error)")
        }
        #expect(access(top + "/elsewhere/x", F_OK) != 0, "nothing made through the link")
    }
}
