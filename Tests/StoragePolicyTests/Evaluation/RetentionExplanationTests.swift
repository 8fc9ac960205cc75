// `explain` for keep, minAge and unit: the words that say why an entry a rule would otherwise take was kept.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("explain: keep, minAge and unit") struct RetentionExplanationTests {
    static let day: Int64 = 86_400_000_000_000
    static let now: Int64 = 100 * day

    static func status(_ type: FileType, age: Int64) -> FileStatus {
        FileStatus(device: 1, inode: 2, type: type, size: 0, allocatedSize: 0, accessTimeNs: now - age,
                   modificationTimeNs: now - age, changeTimeNs: now)
    }

    static func why(_ kind: Rule.Kind, _ p: String, _ status: FileStatus, deleted: Bool = false) -> [String] {
        RetentionExplanation.why(rule("r", "s", kind), path: path(p), status: status, now: now, deleted: deleted)
    }

    @Test("an expire unit kept with keep says so; an entry inside a unit is judged only with it")
    func expireUnits() {
        let kind = Rule.Kind.expire(Expire(after: .days(7), keep: 2, unit: .directory))
        #expect(Self.why(kind, "s/u", Self.status(.directory, age: 9 * Self.day)) == [
            "unit: directory: this folder is one unit, dated by the newest timestamp (mtime) inside it and deleted whole; kept: something inside is newer than 1w, or cannot be dated, or it is one of the 2 newest units in its scope (keep: 2)"])
        #expect(Self.why(kind, "s/u", Self.status(.directory, age: 9 * Self.day), deleted: true) == [
            "unit: directory: this folder is one unit, dated by the newest timestamp (mtime) inside it and deleted whole"])
        #expect(Self.why(kind, "s/u/f", Self.status(.regular, age: 9 * Self.day)) == [
            "unit: directory: judged only as part of the unit 'u', never on its own"])
        #expect(Self.why(.expire(Expire(after: .days(7), keep: 3)), "s/f", Self.status(.regular, age: 9 * Self.day)) == [
            "kept: one of the 3 newest in its directory (keep: 3)"])
    }

    @Test("a quota unit, its keep and its minAge are explained; what is inside a unit goes only with it")
    func quotaUnits() {
        let kind = Rule.Kind.quota(Quota(max: .gibibytes(1), minAge: .hours(1), keep: 3, unit: .directory))
        #expect(Self.why(kind, "s/u", Self.status(.directory, age: 9 * Self.day)) == [
            "unit: directory: this folder is one unit, dated by the newest mtime inside it and evicted whole",
            "keep: 3: the 3 newest units of the scope are never evicted"])
        #expect(Self.why(kind, "s/u", Self.status(.directory, age: Self.day / 48)) == [
            "unit: directory: this folder is one unit, dated by the newest mtime inside it and evicted whole",
            "never evicted: younger than minAge 1h",
            "keep: 3: the 3 newest units of the scope are never evicted"])
        #expect(Self.why(kind, "s/u/f", Self.status(.regular, age: 9 * Self.day)) == [
            "unit: directory: evicted only as part of the unit 'u', never on its own"])
        #expect(Self.why(.quota(Quota(max: .gibibytes(1), keep: 2)), "s/f", Self.status(.regular, age: 9 * Self.day)) == [
            "keep: 2: the 2 newest files of the scope are never evicted"])
    }
}
