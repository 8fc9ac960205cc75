import Testing
import StoragePolicy

@Suite("ActionCounts description") struct ActionCountsDescriptionTests {
    @Test("print(counts) names each verb with its count, in StepVerb order, none for zero")
    func named() {
        let counts: ActionCounts = [.mkdir: 1, .delete: 5, .writeTag: 2]
        #expect("\(counts)" == "ActionCounts(delete: 5, mkdir: 1, write-tag: 2)")
        #expect(String(describing: ActionCounts()) == "ActionCounts()")
    }
}
