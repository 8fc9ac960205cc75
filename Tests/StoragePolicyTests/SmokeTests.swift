import Testing
@testable import StoragePolicy

@Test("the policy language is version 1") func languageVersion() {
    #expect(StoragePolicyVersion.policyLanguage == 1)
}
