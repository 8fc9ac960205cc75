// libFuzzer entry point over the journal readers and recovery: any bytes in, made into a journal whose
// checksums are valid (so mutations reach the decoders), then read by `journal` and recovered twice on a
// scratch root. Never a crash, never a change outside that root. Built by `Fuzz/run.sh journal`.
#if canImport(Glibc)
import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func journalFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let scratch = getenv("JOURNAL_FUZZ_SCRATCH").map { String(cString: $0) } ?? "/tmp"
    let problems = JournalFuzzing.exercise(bytes, scratch: scratch)
    if !problems.isEmpty { fatalError("journal input handled unsafely: \(problems.joined(separator: "; "))") }
    return 0
}
