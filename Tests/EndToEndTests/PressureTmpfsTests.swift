// Pressure rules end to end on a real full volume: a 4 MiB tmpfs mounted in a private mount namespace
// (unshare -m), the built binary run as root against it. Filled to 95 %, a pressure rule at 10 % / 15 % frees
// cache files to at least 15 % free and stops (the newest cache files and the one younger than minAge stay);
// at 25 % free the same policy evicts nothing; a co-tenant (uid 12345) who fills the disk to 100 % gets only
// cache files evicted: its own file and the user's documents stay. Skipped where tmpfs cannot be mounted.
import TreeFixture
import Foundation
import Testing

@Suite("pressure rules on a full tmpfs (binary, as root, private mount namespace)")
struct PressureTmpfsTests {
    /// $1 policyctl, $2 mount point, $3 policy folder, $4 scenario: fill95 | free25 | cotenant.
    static let script = #"""
        set -e
        P="$1"; R="$2"; D="$3"; S="$4"
        mount -t tmpfs -o size=4m,mode=0755 tmpfs "$R"
        free() { echo $(( $(stat -f -c '%a' "$R") * $(stat -f -c '%S' "$R") )); }
        mkdir -p "$R/cache" "$R/docs" "$R/shared"
        chmod 1777 "$R/shared"
        now=$(date +%s)
        i=1; while [ $i -le 20 ]; do head -c 102400 /dev/zero > "$R/cache/c$i"; touch -d "@$(( now - i * 86400 ))" "$R/cache/c$i"; i=$((i+1)); done
        head -c 10240 /dev/zero > "$R/cache/fresh"
        head -c 1048576 /dev/zero > "$R/docs/mine.doc"; touch -d "@$(( now - 90 * 86400 ))" "$R/docs/mine.doc"
        fill() { want=$(( 4194304 - 4194304 * $1 / 100 )); a=$(free); if [ $a -gt $want ]; then head -c $(( a - want )) /dev/zero > "$R/docs/filler"; fi; }
        case "$S" in
          fill95) fill 95 ;;
          free25) fill 75 ;;
          cotenant) setpriv --reuid=12345 --regid=12345 --clear-groups sh -c "head -c 8388608 /dev/zero > '$R/shared/hog'" 2>/dev/null || true ;;
        esac
        echo "before: $(free)"
        st=0; "$P" apply --policy "$D/p.yaml" --root "$R" --yes > "$D/out" 2>&1 || st=$?
        echo "status: $st"
        echo "after: $(free)"
        echo "cache: $(ls "$R/cache" | sort | tr '\n' ' ')"
        echo "docs: $(ls "$R/docs" | sort | tr '\n' ' ')"
        echo "shared: $(ls "$R/shared" | sort | tr '\n' ' ')"
        umount "$R"
        """#

    static let policy = """
        version: 1
        name: pressure
        pressure:
          - name: low-disk
            freeBelow: 10%
            freeUntil: 15%
            evict: [cache]
        rules:
          - name: cache
            path: cache
            regenerable: true
            quota: { max: 1GiB, minAge: 1h }

        """

    static let canMountTmpfs: Bool = {
        guard getuid() == 0 else { return false }
        let probe = "d=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs \"$d\" && umount \"$d\" && rmdir \"$d\""
        return (try? ChildProcess.run("/usr/bin/unshare", ["-m", "/bin/sh", "-c", probe]))?.status == 0
    }()

    /// One scenario's report: `before`, `status`, `after` as numbers; `cache`, `docs`, `shared` as name lists.
    static func run(_ scenario: String) throws -> (numbers: [String: Int64], names: [String: [String]], log: String) {
        let scratch = ScratchDirectory("pressure")
        chmod(scratch.path, 0o755)
        let mount = scratch.sub("mnt"), folder = scratch.sub("policy")
        try writePolicy(folder + "/p.yaml", policy)
        try script.write(toFile: folder + "/run.sh", atomically: true, encoding: .utf8)
        let r = try ChildProcess.run("/usr/bin/unshare", ["-m", "/bin/sh", folder + "/run.sh", PolicyctlBinary.path, mount, folder, scenario])
        let log = (try? String(contentsOfFile: folder + "/out", encoding: .utf8)) ?? ""
        var numbers: [String: Int64] = [:], names: [String: [String]] = [:]
        for line in r.stdout.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            if let n = Int64(parts[1]) { numbers[parts[0]] = n } else { names[parts[0]] = parts[1].split(separator: " ").map(String.init) }
        }
        #expect(r.status == 0, "\(r) \(log)")
        return (numbers, names, log + r.stderr)
    }

    static let total: Int64 = 4 * 1024 * 1024

    @Test("filled to 95 %: the oldest cache files go until at least 15 % is free, and no more; user files stay",
          .enabled(if: canMountTmpfs))
    func fullDisk() throws {
        let r = try Self.run("fill95")
        #expect(r.numbers["status"] == 0, "\(r.log)")
        #expect(r.numbers["before"]! * 100 < Self.total * 10, "\(r)")
        #expect(r.numbers["after"]! * 100 >= Self.total * 15, "\(r)")
        let cache = r.names["cache"] ?? []
        // Oldest first: c20, c19, ... went; the newest cache files and the fresh one (younger than minAge) stay.
        #expect(cache.contains("fresh") && cache.contains("c1") && !cache.contains("c20"), "\(r)")
        // It stops at the target: most of the cache is still there.
        #expect(cache.count >= 12, "\(r)")
        #expect(r.names["docs"] == ["filler", "mine.doc"], "\(r)")
    }

    @Test("debug builds' POLICYCTL_FREE_SPACE=FREE/TOTAL stands in for statvfs: the plan notes the snapshot it judged")
    func freeSpaceSeam() throws {
        let scratch = ScratchDirectory("pressure-seam")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("cache"), .file("cache/old", size: 4096, ageHours: 48)])
        try writePolicy(scratch.path + "/p.yaml", Self.policy)
        let low = try policyctl(["plan", "--policy", scratch.path + "/p.yaml", "--root", root], environment: ["POLICYCTL_FREE_SPACE": "1000/100000"])
        #expect(low.status == 0, "\(low)")
        #expect(low.stdout.contains("delete    cache/old"), "\(low)")
        #expect(low.stdout.contains("pressure rule 'low-disk': 1000 B free of 97.7 KiB (1.0 %) < freeBelow 10%"), "\(low)")
        let roomy = try policyctl(["plan", "--policy", scratch.path + "/p.yaml", "--root", root], environment: ["POLICYCTL_FREE_SPACE": "50000/100000"])
        #expect(!roomy.stdout.contains("delete    cache/old"), "\(roomy)")
        #expect(roomy.stdout.contains("is not below freeBelow 10% (9.8 KiB): evicts nothing"), "\(roomy)")
    }

    @Test("at 25 % free the same policy evicts nothing", .enabled(if: canMountTmpfs))
    func roomyDisk() throws {
        let r = try Self.run("free25")
        #expect(r.numbers["status"] == 0, "\(r.log)")
        #expect(r.names["cache"]?.count == 21, "\(r)")
        #expect(r.log.contains("Nothing to do"), "\(r.log)")
    }

    @Test("a co-tenant who fills the disk to 100 % gets only cache files evicted", .enabled(if: canMountTmpfs && CoTenant.isAvailable))
    func coTenantFillsTheDisk() throws {
        let r = try Self.run("cotenant")
        #expect(r.numbers["status"] == 0, "\(r.log)")
        #expect(r.numbers["before"] == 0, "\(r)")
        #expect(r.names["shared"] == ["hog"], "\(r)")
        #expect(r.names["docs"] == ["mine.doc"], "\(r)")
        let cache = r.names["cache"] ?? []
        #expect(cache.count < 21 && cache.contains("fresh"), "\(r)")
        #expect(r.numbers["after"]! > r.numbers["before"]!, "\(r)")
    }
}
