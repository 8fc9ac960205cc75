// Expiry rules over real temporary trees: boundaries, timestamps, directories that empty out, odd entries.
// Every expected plan is written out by hand here, never computed by the engine.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
import TreeFixture

@Suite("Expire") struct ExpireTests {
    @Test("deletes files older than the limit and keeps the rest, at the exact boundary")
    func boundary() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("old.dat", age: .hours(25))
                File("just-over.dat", age: .seconds(86401))
                File("exactly.dat", age: .seconds(86400))
                File("just-under.dat", age: .seconds(86399))
                File("new.dat", age: .hours(1))
            }
            File("outside.dat", age: .days(30))
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("tmp-expiry", "tmp", expire(.hours(24)))])
        #expect(p.lines == ["delete tmp/just-over.dat", "delete tmp/old.dat"])
        #expect(p.violations.isEmpty)
        #expect(p.summary.entriesScanned == 7)
        let old = try #require(p.actions.first { $0.path == path("tmp/old.dat") })
        #expect(old.reason == "mtime 1d1h ago > 1d")
        #expect(old.bytes == allocated(tree, "tmp/old.dat"))
        #expect(old.identity?.size == 100)
        #expect(old.type == .regular)
        #expect(p.summary.bytesFreed == allocated(tree, "tmp/old.dat") + allocated(tree, "tmp/just-over.dat"))
    }

    @Test("judges by the timestamp `by` names", arguments: [
        (Expire.Timestamp.mtime, ["delete tmp/old-mtime"]),
        (.atime, ["delete tmp/old-atime"]),
        (.newest, [String]()),  // ctime is fresh for both files
    ])
    func timestamps(by: Expire.Timestamp, expected: [String]) throws {
        let tree = try Tree {
            Dir("tmp") {
                File("old-mtime", age: .days(3), atime: .hours(1))
                File("old-atime", age: .hours(1), atime: .days(3))
            }
        }
        defer { tree.remove() }
        #expect(try plan(tree, [rule("r", "tmp", expire(.days(1), by: by))]).lines == expected)
    }

    @Test("ctime and newest: ctime counts for files, not for directories")
    func ctimeAndNewest() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("file", age: .days(3), atime: .days(3))
                Dir("dir", age: .days(3))
            }
        }
        defer { tree.remove() }
        // Does this file system record birth times? (By btime, ten days on, the directory made just now is expired.)
        let hasBirth = try !plan(tree, [rule("b", "tmp", expire(.days(1), by: .birth), type: .directory)],
                                 now: tree.now + PolicyDuration.days(10).nanoseconds).lines.isEmpty
        // Now: the file's ctime is fresh, so `newest` keeps it; the directory's ctime does not count, but its birth
        // time does where recorded (tmpfiles' ABM): a directory backdated right after it was made is young.
        let today = try plan(tree, [rule("r", "tmp", expire(.days(1), by: .newest))])
        if hasBirth {
            #expect(today.lines == [])
        } else {
            #expect(today.lines == ["delete tmp/dir"])
            #expect(today.actions.first?.reason.hasPrefix("newest (mtime) 3d ago > 1d") == true)
        }
        // Two days later the ctime is two days old too.
        let later = try plan(tree, [rule("r", "tmp", expire(.days(1), by: .newest))], now: tree.now + PolicyDuration.days(2).nanoseconds)
        #expect(later.lines == ["delete tmp/dir", "delete tmp/file"])
        // The kernel stamps ctime with a coarse clock: the age is two days give or take a tick.
        #expect(later.actions[1].reason.hasPrefix("newest (ctime) "))
        #expect(later.actions[1].reason.hasSuffix(" ago > 1d"))
        let byCtime = try plan(tree, [rule("r", "tmp", expire(.days(1), by: .ctime))])
        #expect(byCtime.lines.isEmpty)
    }

    @Test("a directory goes as one action once everything in it goes and it is expired itself")
    func directoriesThatEmpty() throws {
        let tree = try Tree {
            Dir("tmp", age: .days(10)) {
                Dir("build", age: .days(3)) {
                    File("a.o", age: .days(3))
                    Dir("sub", age: .days(3)) { File("b.o", age: .days(2)) }
                }
                Dir("keep", age: .days(3)) {
                    File("young", age: .hours(1))
                    File("old", age: .days(2))
                }
                Dir("fresh-empty")
                Dir("old-empty", age: .days(5))
                Dir("young-with-old", age: .hours(2)) { File("old", age: .days(2)) }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("tmp-expiry", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/build", "delete tmp/keep/old", "delete tmp/old-empty", "delete tmp/young-with-old/old"])
        let build = try #require(p.actions.first)
        #expect(build.entries == 4)
        #expect(build.type == .directory)
        let expectedBytes = ["tmp/build", "tmp/build/a.o", "tmp/build/sub", "tmp/build/sub/b.o"].reduce(Int64(0)) { $0 + allocated(tree, $1) }
        #expect(build.bytes == expectedBytes)
        #expect(build.reason == "mtime 3d ago > 1d; everything in it is deleted")
        #expect(p.actions[2].entries == 1)
        #expect(p.actions[2].reason == "mtime 5d ago > 1d; empty")
    }

    @Test("match, exclude and type narrow what a rule may delete")
    func narrowing() throws {
        let tree = try Tree {
            Dir("Documents") {
                File("a.tmp", age: .hours(2))
                File("b.tmp", age: .minutes(30))
                File("c.txt", age: .days(9))
                Dir("x.tmp", age: .days(2))
                Dir("deep", age: .days(2)) {
                    File("d.tmp", age: .hours(3))
                    Dir("keep") { File("e.tmp", age: .hours(3)) }
                }
            }
        }
        defer { tree.remove() }
        let residue = rule("residue", "Documents", expire(.hours(1)), match: ["**/*.tmp"], exclude: ["**/keep/**"])
        #expect(try plan(tree, [residue]).lines == ["delete Documents/a.tmp", "delete Documents/deep/d.tmp", "delete Documents/x.tmp"])
        let filesOnly = rule("residue", "Documents", expire(.hours(1)), match: ["**/*.tmp"], exclude: ["**/keep/**"], type: .file)
        #expect(try plan(tree, [filesOnly]).lines == ["delete Documents/a.tmp", "delete Documents/deep/d.tmp"])
    }

    @Test("a symlink is judged as a link: deleted itself, never followed, never entered")
    func symlinks() throws {
        let outside = try Tree {
            Dir("victim", age: .days(30)) { File("precious", age: .days(30)) }
        }
        defer { outside.remove() }
        let before = Manifest.take(outside.root)
        let tree = try Tree {
            Dir("tmp") {
                Symlink("old-link", to: outside.root + "/victim", age: .days(3))
                Symlink("young-link", to: outside.root + "/victim")
                Symlink("dangling", to: "/nonexistent/x", age: .days(3))
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/dangling", "delete tmp/old-link"])
        #expect(p.actions.allSatisfy { $0.type == .symlink })
        #expect(p.summary.entriesScanned == 4)
        #expect(Manifest.take(outside.root) == before)
    }

    @Test("FIFOs are skipped and reported, and keep their directory")
    func fifo() throws {
        let tree = try Tree {
            Dir("tmp") {
                Dir("old", age: .days(3)) {
                    FIFO("pipe", age: .days(3))
                    File("old.dat", age: .days(3))
                }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/old/old.dat"])
        #expect(p.skippedLines == ["tmp/old/pipe: fifo: not a regular file, directory or symlink; left alone"])
    }

    @Test("a hard-linked file frees nothing when one name goes")
    func hardLinks() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("a", age: .days(3))
                HardLink("b", to: "a", age: .days(3))
                File("single", age: .days(3))
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/a", "delete tmp/b", "delete tmp/single"])
        #expect(p.actions.map(\.bytes) == [0, 0, allocated(tree, "tmp/single")])
        #expect(p.actions[0].identity?.inode == p.actions[1].identity?.inode)
    }

    @Test("names are bytes: invalid UTF-8 and newlines survive into the plan and its JSON")
    func hostileNames() throws {
        let invalid: [UInt8] = [0x66, 0xFF, 0xFE, 0x2E, 0x64]  // f\xff\xfe.d
        let tree = try Tree {
            Dir("tmp") {
                File(bytes: invalid, age: .days(3))
                File("line\nbreak.dat", age: .days(3))
                File("-rf", age: .days(3))
                File(String(repeating: "n", count: 255), age: .days(3))
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/-rf", "delete tmp/f\\xff\\xfe.d", "delete tmp/line\\nbreak.dat",
                            "delete tmp/" + String(repeating: "n", count: 255)])
        #expect(p.actions[1].path.bytes == Array("tmp/".utf8) + invalid)
        let json = String(decoding: try p.jsonData(), as: UTF8.self)
        #expect(json.contains("\"pathBase64\" : \"\(RelativePath(Array("tmp/".utf8) + invalid)!.base64)\""))
        #expect(json.contains("\"path\" : \"tmp\\/line\\nbreak.dat\"") || json.contains("\"path\" : \"tmp/line\\nbreak.dat\""))
        let decoded = try Plan.decode(json: try p.jsonData())
        #expect(decoded.actions.map(\.path) == p.actions.map(\.path))
    }

    @Test("audit mode reports what it would delete and plans nothing")
    func audit() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("old", age: .days(3))
                Dir("gone", age: .days(3)) { File("x", age: .days(3)) }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("r", "tmp", expire(.days(1)), mode: .audit)])
        #expect(p.actions.isEmpty)
        #expect(p.findings == [
            "r: tmp/gone: mtime 3d ago > 1d: would be deleted with its 1 entries",
            "r: tmp/gone/x: mtime 3d ago > 1d: would be deleted",
            "r: tmp/old: mtime 3d ago > 1d: would be deleted",
        ])
        #expect(p.violations.allSatisfy { $0.severity == .warning })
    }

    @Test("of two rules deleting one entry, the earlier one is named")
    func firstRuleWins() throws {
        let tree = try Tree { Dir("tmp") { File("a.tmp", age: .days(3)) } }
        defer { tree.remove() }
        let p = try plan(tree, [rule("broad", "", expire(.days(2))), rule("narrow", "tmp", expire(.days(1)))])
        #expect(p.lines == ["delete tmp/a.tmp"])
        #expect(p.actions.first?.rule == "broad")
    }

    @Test("the scope, layout directories and the way to them are never deleted")
    func structure() throws {
        let tree = try Tree {
            Dir("tmp", age: .days(9)) {
                Dir("keep", age: .days(9))
                Dir("inner", age: .days(9))
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("all", "", expire(.days(1))), rule("inner", "tmp/inner", expire(.days(1)))],
                         layout: [LayoutEntry(path: path("tmp/keep"))])
        #expect(p.lines.isEmpty)
    }
}
