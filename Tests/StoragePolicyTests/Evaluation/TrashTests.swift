// Trash retention over both layouts: FreeDesktop info/*.trashinfo dates (local time, both forms) and the
// app layout's stamp or ctime. Never mtime; undated items are kept and reported. Expected plans by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Trash") struct TrashTests {
    /// `YYYY-MM-DDThh:mm:ss` in local time for `now - age`, formatted by the test itself.
    static func localDate(_ now: Int64, minus age: PolicyDuration, fraction: String = "") -> String {
        var seconds = time_t((now - age.nanoseconds) / 1_000_000_000)
        var t = tm()
        localtime_r(&seconds, &t)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(t.tm_year + 1900, 4))-\(pad(t.tm_mon + 1, 2))-\(pad(t.tm_mday, 2))T\(pad(t.tm_hour, 2)):\(pad(t.tm_min, 2)):\(pad(t.tm_sec, 2))\(fraction)"
    }

    /// The same instant in UTC with a `Z`.
    static func utcDate(_ now: Int64, minus age: PolicyDuration) -> String {
        let at = now - age.nanoseconds
        var seconds = time_t(at / 1_000_000_000)
        var t = tm()
        gmtime_r(&seconds, &t)
        func pad(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        // The fraction is the instant's own milliseconds, truncated: a fixed ".250" made the date up to
        // 250 ms later than `now - age`, so an item dated "5 days ago" was 4d23h old one run in four.
        let millis = Int32(at % 1_000_000_000 / 1_000_000)
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(t.tm_year + 1900)-\(pad(t.tm_mon + 1))-\(pad(t.tm_mday))T\(pad(t.tm_hour)):\(pad(t.tm_min)):\(pad(t.tm_sec)).\(fraction)Z"
    }

    static func info(_ date: String) -> String { "[Trash Info]\nPath=/home/u/somewhere\nDeletionDate=\(date)\n" }

    static let retention = rule("trash-retention", "Trash", .trash(TrashRetention(retain: .days(30))))

    @Test("FreeDesktop: dated by info/NAME.trashinfo, deleted with it; undated items kept and reported")
    func freedesktop() throws {
        let now = Tree.currentTimeNs()
        let tree = try Tree(now: now) {
            Dir("Trash") {
                Dir("files") {
                    File("old.txt", age: .days(1))
                    File("new.txt", age: .days(300))  // an old mtime does not matter
                    File("over.txt")
                    File("under.txt")
                    File("no-info.txt", age: .days(300))
                    File("garbled.txt")
                    File("zoned.txt")
                    File("fraction.txt")
                    Dir("old-dir") {
                        File("a")
                        Dir("b") { File("c") }
                    }
                }
                Dir("info") {
                    File("old.txt.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(40))))
                    File("new.txt.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(2))))
                    File("over.txt.trashinfo", contents: Self.info(Self.localDate(now, minus: .seconds(30 * 86400 + 60))))
                    File("under.txt.trashinfo", contents: Self.info(Self.localDate(now, minus: .seconds(30 * 86400 - 60))))
                    File("garbled.txt.trashinfo", contents: Self.info("yesterday"))
                    File("zoned.txt.trashinfo", contents: Self.info(Self.utcDate(now, minus: .days(31))))
                    File("fraction.txt.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(31), fraction: ".123456")))
                    File("old-dir.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(90))))
                    File("orphan.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(90))))
                }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [Self.retention])
        #expect(p.lines == [
            "delete Trash/files/fraction.txt", "delete Trash/files/old-dir", "delete Trash/files/old.txt",
            "delete Trash/files/over.txt", "delete Trash/files/zoned.txt",
            "delete Trash/info/fraction.txt.trashinfo", "delete Trash/info/old-dir.trashinfo",
            "delete Trash/info/old.txt.trashinfo", "delete Trash/info/orphan.trashinfo", "delete Trash/info/over.txt.trashinfo",
            "delete Trash/info/zoned.txt.trashinfo",
        ])
        #expect(p.actions.first { $0.path == path("Trash/info/orphan.trashinfo") }?.reason
                == "an orphaned .trashinfo (there is no files/orphan): trashed (DeletionDate) 90d ago > 30d")
        #expect(p.findings == [
            "trash-retention: Trash/files/garbled.txt: cannot tell when it was trashed: info/garbled.txt.trashinfo has no readable DeletionDate ('yesterday' is not a valid time); kept",
            "trash-retention: Trash/files/no-info.txt: cannot tell when it was trashed: there is no info/no-info.txt.trashinfo; kept",
        ])
        let dir = try #require(p.actions.first { $0.path == path("Trash/files/old-dir") })
        #expect(dir.entries == 4)
        #expect(dir.bytes == ["old-dir", "old-dir/a", "old-dir/b", "old-dir/b/c"].reduce(Int64(0)) { $0 + allocated(tree, "Trash/files/" + $1) })
        #expect(dir.reason == "trashed (DeletionDate) 90d ago > 30d")
    }

    @Test("app layout: dated by the trash stamp, else ctime, never mtime")
    func appLayout() throws {
        let now = Tree.currentTimeNs()
        func stamp(_ age: PolicyDuration) -> [(String, [UInt8])] {
            [(Markers.trashStampAttribute, Array(String((now - age.nanoseconds) / 1_000_000_000).utf8))]
        }
        let tree = try Tree(now: now) {
            Dir("Trash") {
                File("stamped-old", age: .days(1), xattrs: stamp(.days(40)))
                File("stamped-new", age: .days(300), xattrs: stamp(.days(2)))
                File("garbage", xattrs: [(Markers.trashStampAttribute, Array("soon".utf8))])
                File("unstamped", age: .days(300))
                Dir("stamped-dir", xattrs: stamp(.days(40))) { File("x") }
            }
        }
        defer { tree.remove() }
        let today = try plan(tree, [Self.retention])
        #expect(today.lines == ["delete Trash/stamped-dir", "delete Trash/stamped-old"])
        #expect(today.actions[0].entries == 2)
        #expect(today.actions[1].reason == "trashed (trash stamp) 40d ago > 30d")
        #expect(today.findings == ["trash-retention: Trash/garbage: cannot tell when it was trashed: its trash stamp (user.policyctl.trashed) is not a time: 'soon'; kept"])
        // 31 days on, the unstamped file's ctime (when it was made) is old enough too.
        let later = try plan(tree, [Self.retention], now: now + PolicyDuration.days(31).nanoseconds)
        #expect(later.lines == ["delete Trash/stamped-dir", "delete Trash/stamped-new", "delete Trash/stamped-old", "delete Trash/unstamped"])
        #expect(later.actions[3].reason.hasPrefix("trashed (ctime) "))
    }

    @Test("audit mode reports trash items it would delete")
    func audit() throws {
        let now = Tree.currentTimeNs()
        let tree = try Tree(now: now) {
            Dir("Trash") {
                File("old", xattrs: [(Markers.trashStampAttribute, Array(String((now - PolicyDuration.days(40).nanoseconds) / 1_000_000_000).utf8))])
            }
        }
        defer { tree.remove() }
        var r = Self.retention
        r.mode = .audit
        let p = try plan(tree, [r])
        #expect(p.actions.isEmpty)
        #expect(p.findings == ["trash-retention: Trash/old: trashed (trash stamp) 40d ago > 30d: would be deleted"])
    }

    @Test("dates 64-bit nanoseconds cannot hold, or too far back to measure an age from, are kept and reported")
    func outOfRangeDates() throws {
        let now = Tree.currentTimeNs()
        let tree = try Tree(now: now) {
            Dir("Trash") {
                Dir("files") { File("late"); File("early"); File("far"); File("distant"); File("fine") }
                Dir("info") {
                    File("late.trashinfo", contents: Self.info("2262-04-12T00:00:00"))
                    File("early.trashinfo", contents: Self.info("1677-09-20T00:00:00Z"))
                    File("far.trashinfo", contents: Self.info("9999-12-31T23:59:59.999999999Z"))
                    File("distant.trashinfo", contents: Self.info("1700-01-01T00:00:00Z"))  // fits, but now - it does not
                    File("fine.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(31))))
                    File("gone.trashinfo", contents: Self.info("9999-01-01T00:00:00"))  // an orphan, unreadable
                }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [Self.retention])
        #expect(p.lines == ["delete Trash/files/fine", "delete Trash/info/fine.trashinfo"])
        #expect(p.findings == [
            "trash-retention: Trash/files/distant: cannot tell when it was trashed: its date (DeletionDate) is out of range; kept",
            "trash-retention: Trash/files/early: cannot tell when it was trashed: info/early.trashinfo has no readable DeletionDate ('1677-09-20T00:00:00Z' is not a valid time); kept",
            "trash-retention: Trash/files/far: cannot tell when it was trashed: info/far.trashinfo has no readable DeletionDate ('9999-12-31T23:59:59.999999999Z' is not a valid time); kept",
            "trash-retention: Trash/files/late: cannot tell when it was trashed: info/late.trashinfo has no readable DeletionDate ('2262-04-12T00:00:00' is not a valid time); kept",
            "trash-retention: Trash/info/gone.trashinfo: an orphaned .trashinfo (there is no files/gone) has no readable DeletionDate ('9999-01-01T00:00:00' is not a valid time); kept",
        ])
    }

    @Test("an app trash stamp out of range is reported, not a trap")
    func outOfRangeStamp() throws {
        let tree = try Tree {
            Dir("Trash") {
                File("huge", xattrs: [(Markers.trashStampAttribute, Array("99999999999".utf8))])
                File("max", xattrs: [(Markers.trashStampAttribute, Array("9223372036.854775807".utf8))])
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [Self.retention])
        #expect(p.actions.isEmpty)
        #expect(p.findings == ["trash-retention: Trash/huge: cannot tell when it was trashed: its trash stamp (user.policyctl.trashed) is not a time: '99999999999'; kept"])
    }

    @Test("an impossible calendar date is unreadable: the item is kept and reported, not rolled over and deleted")
    func impossibleDate() throws {
        let tree = try Tree {
            Dir("Trash") {
                Dir("files") { File("feb30"); File("leap"); File("midnight") }
                Dir("info") {
                    File("feb30.trashinfo", contents: Self.info("2023-02-30T10:00:00"))
                    File("leap.trashinfo", contents: Self.info("2024-02-29T10:00:00"))
                    File("midnight.trashinfo", contents: Self.info("2023-03-01T24:00:00"))
                }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [Self.retention])
        #expect(p.lines == ["delete Trash/files/leap", "delete Trash/info/leap.trashinfo"])
        #expect(p.findings == [
            "trash-retention: Trash/files/feb30: cannot tell when it was trashed: info/feb30.trashinfo has no readable DeletionDate ('2023-02-30T10:00:00' is not a valid time); kept",
            "trash-retention: Trash/files/midnight: cannot tell when it was trashed: info/midnight.trashinfo has no readable DeletionDate ('2023-03-01T24:00:00' is not a valid time); kept",
        ])
    }

    @Test("an orphaned .trashinfo goes once older than retain; a young one stays; audit reports; no header is reported")
    func orphans() throws {
        let now = Tree.currentTimeNs()
        let tree = try Tree(now: now) {
            Dir("Trash") {
                Dir("files") { File("kept") }
                Dir("info") {
                    File("kept.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(1))))
                    File("old.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(31))))
                    File("young.trashinfo", contents: Self.info(Self.localDate(now, minus: .days(29))))
                    File("headless.trashinfo", contents: "DeletionDate=2001-01-01T00:00:00\n")
                    File("not-info.txt", contents: Self.info(Self.localDate(now, minus: .days(90))))
                }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [Self.retention])
        #expect(p.lines == ["delete Trash/info/old.trashinfo"])
        #expect(p.actions[0].reason == "an orphaned .trashinfo (there is no files/old): trashed (DeletionDate) 31d ago > 30d")
        #expect(p.actions[0].identity != nil)
        #expect(p.findings == ["trash-retention: Trash/info/headless.trashinfo: an orphaned .trashinfo (there is no files/headless) has no DeletionDate in a [Trash Info] group; kept"])
        var audit = Self.retention
        audit.mode = .audit
        let audited = try plan(tree, [audit])
        #expect(audited.actions.isEmpty)
        #expect(audited.findings == [
            "trash-retention: Trash/info/headless.trashinfo: an orphaned .trashinfo (there is no files/headless) has no DeletionDate in a [Trash Info] group; kept",
            "trash-retention: Trash/info/old.trashinfo: an orphaned .trashinfo (there is no files/old): trashed (DeletionDate) 31d ago > 30d: would be deleted",
        ])
    }

    @Test("with retain 0d a half-made FreeDesktop trash keeps its structure: files/ and info/ are never items")
    func halfMadeFreedesktop() throws {
        let zero = rule("trash-retention", "Trash", .trash(TrashRetention(retain: .seconds(0))))
        let onlyFiles = try Tree { Dir("Trash") { Dir("files", age: .days(9)) { File("x", age: .days(9)) } } }
        defer { onlyFiles.remove() }
        let p = try plan(onlyFiles, [zero])
        #expect(p.actions.isEmpty)
        #expect(p.findings == ["trash-retention: Trash/files/x: cannot tell when it was trashed: there is no info/x.trashinfo; kept"])
        let onlyInfo = try Tree { Dir("Trash") { Dir("info", age: .days(9)) } }
        defer { onlyInfo.remove() }
        #expect(try plan(onlyInfo, [zero]).actions.isEmpty)
        let empty = try Tree { Dir("Trash") { Dir("files", age: .days(9)); Dir("info", age: .days(9)) } }
        defer { empty.remove() }
        #expect(try plan(empty, [zero]).actions.isEmpty)
    }

    @Test("app trash index: a hard-linked item is dated by root's or its owner's entry; anyone else's is ignored")
    func appIndex() throws {
        let now = Tree.currentTimeNs()
        // One second past 40 days: the .250 fraction the helper adds must not make it 39d23h.
        let old = "[Trash Info]\nPath=docs/a\nDeletionDate=\(Self.utcDate(now, minus: .seconds(40 * 86400 + 1)))\n"
        let tree = try Tree(now: now) {
            Dir("Trash") {
                File("linked")
                HardLink("linked-2", to: "linked")
                File("forged")
                HardLink("forged-2", to: "forged")
                Symlink("link", to: "/etc/passwd")
                Dir(".policyctl-info", age: .days(90)) {
                    File("linked.trashinfo", contents: old)
                    File("forged.trashinfo", contents: old)
                    File("link.trashinfo", contents: old)
                    File("gone.trashinfo", contents: old)
                }
            }
        }
        defer { tree.remove() }
        #expect(chown(tree.root + "/Trash/.policyctl-info/forged.trashinfo", 12345, 12345) == 0)
        let p = try plan(tree, [Self.retention])
        #expect(p.lines == ["delete Trash/.policyctl-info/gone.trashinfo", "delete Trash/.policyctl-info/link.trashinfo",
                            "delete Trash/.policyctl-info/linked.trashinfo", "delete Trash/link", "delete Trash/linked"])
        #expect(p.actions.first { $0.path == path("Trash/linked") }?.reason == "trashed (trash index) 40d ago > 30d")
        #expect(p.actions[0].reason == "an orphaned trash index entry (there is no gone): trashed (DeletionDate) 40d ago > 30d")
        #expect(p.findings.isEmpty)
    }
}
