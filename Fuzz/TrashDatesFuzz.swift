// libFuzzer entry point over the trash date readers: any bytes in as a `.trashinfo`, as a trash stamp and as
// a bare DeletionDate value; a date or a refusal out, never a trap, a hang or unbounded memory. A UTC date
// read must print back as itself, a stamp as its whole seconds. Built by `Fuzz/run.sh trash`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func trashDatesFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case .date(let t) = TrashDates.read(trashInfo: bytes) { _ = WallClock.rfc3339(ns: t) }
    _ = TrashDates.read(trashInfo: bytes).problem
    _ = TrashFolder.originalPath(inTrashInfo: bytes)
    if TrashFolder.percentDecoded(TrashFolder.percentEncoded(bytes)) != bytes { fatalError("percent round trip") }

    if let t = TrashDates.stamp(bytes) {
        if t < 0 { fatalError("negative stamp") }
        let whole = t / 1_000_000_000
        if TrashDates.stamp(Array(String(whole).utf8)) != whole * 1_000_000_000 { fatalError("stamp round trip") }
    }

    if let t = TrashDates.parseDate(bytes) {
        // `YYYY-MM-DDThh:mm:ssZ` (no fraction, UTC) must come back exactly from gmtime.
        if bytes.count == 20, bytes.last == 0x5A {
            let printed = WallClock.rfc3339(ns: t)
            if Array(printed.utf8) != bytes { fatalError("UTC date \(String(decoding: bytes, as: UTF8.self)) read as \(printed)") }
        }
    }
    return 0
}
