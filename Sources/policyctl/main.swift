import StoragePolicy
print("policyctl \(StoragePolicyVersion.tool)")
