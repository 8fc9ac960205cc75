// libFuzzer entry point over the policy loader: any bytes in, a policy or diagnostics out, never a crash,
// a hang or unbounded memory. Built by Fuzz/run.sh, not by the package build.

@_cdecl("LLVMFuzzerTestOneInput")
public func policyLoaderFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let loaded = try PolicyLoader.load(bytes: bytes, file: "fuzz.yaml")
        // Exercise what a loaded policy is used for: every glob against a few paths.
        for rule in loaded.policy.rules {
            for glob in rule.match + rule.exclude {
                _ = glob.matches(RelativePath("a/b.tmp")!)
                _ = glob.couldMatchBelow(RelativePath("a")!)
            }
        }
    } catch {
        // Every rejection must be located: a diagnostic without a line is a bug the fuzzer should see.
        for d in error.diagnostics where d.location == nil && !error.isIOError {
            fatalError("unlocated diagnostic: \(d.message)")
        }
        for d in error.diagnostics { _ = d.rendered(source: error.source) }
    }
    return 0
}
