// A million-entry plan holds a couple of hundred thousand actions: their inline size is part of the memory
// budget (Docs/performance.md, "Memory"). A marker's attribute payload is boxed so it does not widen them all.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyPlan
import TreeFixture

@Suite("Action layout") struct ActionLayoutTests {
    @Test("an action stays at most 104 bytes inline, and a boxed setxattr still round-trips its payload")
    func compact() throws {
        #expect(MemoryLayout<Action>.stride <= 104, "stride \(MemoryLayout<Action>.stride), kind \(MemoryLayout<Action.Kind>.size)")
        #expect(MemoryLayout<Action.Kind>.size <= 9)
        let marker = Action(kind: .setxattr(name: "user.x", value: [0xFF, 0x00, 0x41]), path: path("a/b"), rule: "r", reason: "why")
        guard case .setxattr(let name, let value) = marker.kind else {
            Issue.record("not a setxattr: \(marker.kind)")
            return
        }
        #expect(name == "user.x")
        #expect(value == [0xFF, 0x00, 0x41])
        #expect(marker == Action(kind: .setxattr(name: "user.x", value: [0xFF, 0x00, 0x41]), path: path("a/b"), rule: "r", reason: "why"))
        #expect(marker != Action(kind: .setxattr(name: "user.x", value: [0xFF]), path: path("a/b"), rule: "r", reason: "why"))
    }
}
