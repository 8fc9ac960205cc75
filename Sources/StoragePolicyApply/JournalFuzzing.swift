// What the journal fuzz target (Fuzz/JournalFuzz.swift, `Fuzz/run.sh journal`) and its regression tests run on
// one input: the bytes made into a journal with valid checksums (so mutations get past them), read back by
// `journal`, then recovered twice on a scratch root. Never a crash; never a change outside the scratch root.

@_spi(Layers) import StoragePolicyFileSystem

package enum JournalFuzzing {
    /// The input made into a journal: each line is a record body, framed here with its valid checksum; a line
    /// starting with `!` is written as it is (after the `!`), so torn and corrupt lines are exercised too.
    /// `ROOTDEV` and `ROOTINO` become the scratch root's device and inode, so `begin` records can match it.
    package static func journal(from input: [UInt8], rootDevice: UInt64, rootInode: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: false) {
            if line.isEmpty { continue }
            if line.first == 0x21 {
                out += line.dropFirst()
                out.append(0x0A)
                continue
            }
            let body = replace(replace(Array(line), "ROOTDEV", with: String(rootDevice)), "ROOTINO", with: String(rootInode))
            out += JournalRecord.frame(body)
        }
        // A raw last line without its newline: a torn tail, as a crash mid-append leaves it.
        if input.last != 0x0A, input.split(separator: 0x0A).last?.first == 0x21, out.last == 0x0A { out.removeLast() }
        return out
    }

    private static func replace(_ bytes: [UInt8], _ token: String, with value: String) -> [UInt8] {
        let t = Array(token.utf8)
        guard bytes.count >= t.count else { return bytes }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + t.count <= bytes.count && bytes[i..<(i + t.count)].elementsEqual(t) {
                out += value.utf8
                i += t.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// Runs one input against a fresh scratch root under `scratch` (a directory that exists). Returns what was
    /// wrong (empty when the input was handled safely); removes everything it made.
    static func exercise(_ input: [UInt8], scratch: String) -> [String] {
        var problems: [String] = []
        var template = Array((scratch + "/journal-fuzz-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ system_mkdtemp($0.baseAddress!) }) != nil else { return ["mkdtemp failed"] }
        let base = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { removeTree(base) }
        let rootPath = base + "/root"
        _ = system_mkdir(rootPath, 0o755)
        _ = system_mkdir(base + "/outside", 0o755)
        do {
            let root = try DirectoryHandle.open(root: rootPath)
            let outside = try DirectoryHandle.open(root: base + "/outside")
            for name in ["a", "b", "CACHEDIR.TAG"] {
                let f = try root.openFile(FileName(name)!, options: [.writeOnly, .create], permissions: 0o644)
                try f.write(Array(name.utf8))
            }
            try root.makeDirectory(FileName("d")!)
            let sentinel = try outside.openFile(FileName("sentinel")!, options: [.writeOnly, .create], permissions: 0o600)
            try sentinel.write(Array("sentinel".utf8))
            guard let state = try StateDirectory.open(root: root, create: true) else { return ["no state folder"] }
            let lock = try state.lock(wait: false)
            let status = try root.status()
            let journal = try state.directory.openFile(Journal.fileName, options: [.writeOnly, .create, .truncate], permissions: 0o600)
            try journal.write(JournalFuzzing.journal(from: input, rootDevice: status.device, rootInode: status.inode))
            _ = try? JournalHistory.read(state)
            var first: RecoveryReport? = nil
            do { first = try Recovery.run(holding: lock) } catch is RecoveryError {} catch let error as FileSystemError {
                _ = error.description
            }
            if first != nil {
                // A recovery that finished closed everything: the next one has nothing to settle.
                do {
                    let second = try Recovery.run(holding: lock)
                    if !second.entries.isEmpty { problems.append("a second recovery settled \(second.entries.count) transaction(s) again") }
                } catch {
                    problems.append("a second recovery failed after the first finished: \(error)")
                }
            }
            _ = try? JournalHistory.read(state)
            if (try? outside.readFile(FileName("sentinel")!)) != Array("sentinel".utf8) { problems.append("the file outside the root changed") }
            for entry in (try? root.entries()) ?? [] {
                for name in (try? root.extendedAttributeNames(of: entry.name)) ?? [] where !Intent.isEngineAttribute(name) {
                    problems.append("\(entry.name.escaped) got attribute \(name)")
                }
            }
        } catch {
            problems.append("setup failed: \(error)")
        }
        return problems
    }

    /// Removes the scratch tree (the library's own removal, through descriptors).
    private static func removeTree(_ path: String) {
        guard let slash = path.lastIndex(of: "/"), let parent = try? DirectoryHandle.open(root: String(path[..<slash])),
              let name = FileName(String(path[path.index(after: slash)...])) else { return }
        try? parent.removeTree(name)
    }
}
