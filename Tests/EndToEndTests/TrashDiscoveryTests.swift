// `policyctl trash --discover` (binary) on fixture volumes (POLICYCTL_MOUNTINFO, the debug-only seam): the
// specification's places are found, and what a co-tenant (uid 12345) plants in a volume's top folder it can write
// is ignored with a note naming it: a non-sticky `.Trash`, a `.Trash` of its own, a symlinked `.Trash`, a
// `.Trash-12346` it owns. Nothing is entered, nothing changes.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl trash --discover (binary)", .serialized)
struct TrashDiscoveryTests {
    /// Four volumes, each a top folder everyone can write (1777, like a shared USB stick's root), the mount table
    /// naming them, and a victim folder of uid 12346 that a symlinked `.Trash` points at.
    final class Volumes {
        let scratch = ScratchDirectory("trash-discovery")
        let mountinfo: String
        let victim: String

        init() throws {
            chmod(scratch.path, 0o755)
            var table = ""
            for name in ["clean", "nonsticky", "theirs", "linked", "own"] {
                let v = scratch.sub(name)
                chmod(v, 0o1777)
                table += "36 35 98:0 / \(v) rw,noatime master:1 - ext4 /dev/sdb1 rw\n"
            }
            // An escaped mount point, as the kernel writes a space.
            let spaced = scratch.path + "/with space"
            mkdir(spaced, 0o755)
            table += "37 35 98:1 / \(scratch.path)/with\\040space rw - ext4 /dev/sdc1 rw\n"
            mountinfo = scratch.path + "/mountinfo"
            try Data(table.utf8).write(to: URL(fileURLWithPath: mountinfo))
            victim = scratch.sub("victim")
            chown(victim, 12346, 12346)
            try Data("victim\n".utf8).write(to: URL(fileURLWithPath: victim + "/keep"))
            chown(victim + "/keep", 12346, 12346)
            // Root's own, as an administrator sets a volume up: a sticky root-owned .Trash with 12345's folder,
            // and the same in the space-named volume.
            for top in [scratch.path + "/clean", spaced] {
                mkdir(top + "/.Trash", 0o1777); chmod(top + "/.Trash", 0o1777)
                mkdir(top + "/.Trash/12345", 0o700); chown(top + "/.Trash/12345", 12345, 12345)
            }
        }

        func path(_ rel: String) -> String { scratch.path + "/" + rel }
    }

    @Test("the co-tenant's non-sticky, own or symlinked .Trash and its .Trash-12346 are each ignored with a note; the real places are found",
          .enabled(if: CoTenant.isAvailable))
    func hostilePlacesIgnored() throws {
        let v = try Volumes()
        let p = v.scratch.path
        let planted = try CoTenant.sh("""
            set -e
            mkdir -m 0777 '\(p)/nonsticky/.Trash' && chmod 0777 '\(p)/nonsticky/.Trash' && mkdir -m 0700 '\(p)/nonsticky/.Trash/12346'
            mkdir -m 1777 '\(p)/theirs/.Trash' && chmod 1777 '\(p)/theirs/.Trash' && mkdir -m 0700 '\(p)/theirs/.Trash/12346'
            ln -s '\(v.victim)' '\(p)/linked/.Trash'
            mkdir -m 0700 '\(p)/own/.Trash-12346' '\(p)/own/.Trash-12345'
            """)
        #expect(planted.status == 0, "\(planted)")
        // The non-sticky one belongs to root, as a careless administrator might have left it.
        chown(p + "/nonsticky/.Trash", 0, 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: v.victim)
        let run = try policyctl(["trash", "--discover"], environment: ["POLICYCTL_MOUNTINFO": v.mountinfo, "HOME": p + "/nohome"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == """
            \(p)/clean/.Trash/12345\tuid 12345\tshared
            \(p)/own/.Trash-12345\tuid 12345\town
            \(p)/with space/.Trash/12345\tuid 12345\tshared

            """, "\(run)")
        let shared = "; ignored (the specification asks for a sticky folder owned by root)"
        #expect(run.stderr == """
            note: \(p)/nonsticky/.Trash: is not sticky (mode 777)\(shared)
            note: \(p)/theirs/.Trash: is owned by uid 12345, not root\(shared)
            note: \(p)/linked/.Trash: is a symlink\(shared)
            note: \(p)/own/.Trash-12346: is owned by uid 12345, not uid 12346 whose trash it would be; ignored

            """, "\(run)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.victim) == before)
        #expect(try String(contentsOfFile: v.victim + "/keep", encoding: .utf8) == "victim\n")

        let json = try policyctl(["trash", "--discover", "--format", "json"], environment: ["POLICYCTL_MOUNTINFO": v.mountinfo, "HOME": p + "/nohome"])
        let decoded = try JSONDecoder().decode(TrashDiscovery.self, from: Data(json.stdout.utf8))
        let paths: [String] = decoded.found.map(\.path)
        let expected: [String] = [p + "/clean/.Trash/12345", p + "/own/.Trash-12345", p + "/with space/.Trash/12345"]
        #expect(paths == expected)
        #expect(decoded.ignored.count == 4)
    }

    @Test("run as uid 12345, only its own trash folders are looked for: its home trash, then its volume trashes",
          .enabled(if: CoTenant.isAvailable))
    func oneUser() throws {
        let v = try Volumes()
        let p = v.scratch.path
        let home = v.scratch.sub("home")
        chown(home, 12345, 12345)
        #expect(try CoTenant.sh("mkdir -p -m 0700 '\(home)/data/Trash' '\(p)/own/.Trash-12345' '\(p)/own/.Trash-12346'").status == 0)
        let run = try CoTenant.policyctl(["trash", "--discover"], environment: ["POLICYCTL_MOUNTINFO": v.mountinfo, "XDG_DATA_HOME": home + "/data"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == """
            \(home)/data/Trash\tuid 12345\thome
            \(p)/clean/.Trash/12345\tuid 12345\tshared
            \(p)/own/.Trash-12345\tuid 12345\town
            \(p)/with space/.Trash/12345\tuid 12345\tshared

            """, "\(run)")
        #expect(run.stderr == "", "another user's folder is not even looked at: \(run)")
    }

    @Test("--discover takes no root or paths; --format is for --list and --discover (64)")
    func usage() throws {
        let r = try policyctl(["trash", "--discover", "--root", "/tmp"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: --discover takes no --root, --policy, --trash-dir, --restore, --list, --empty or paths"), "\(r)")
        let f = try policyctl(["trash", "--root", "/tmp", "--trash-dir", "t", "--format", "json", "x"])
        #expect(f.status == 64)
        #expect(f.stderr.hasPrefix("Error: --format is for --list and --discover"), "\(f)")
    }
}
