// One path component as raw bytes: never empty, never "." or "..", never containing '/' or NUL.
// Names are bytes end to end; they are decoded only for display, and never lossily for use.

public struct FileName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Accepts exactly one valid component; nil for "", ".", "..", or bytes with '/' or NUL.
    public init?(_ bytes: some Collection<UInt8>) {
        let b = Array(bytes)
        guard !b.isEmpty, b != [0x2E], b != [0x2E, 0x2E],
              !b.contains(0x2F), !b.contains(0) else { return nil }
        self.bytes = b
    }

    public init?(_ string: String) { self.init(Array(string.utf8)) }

    /// For names the caller built from validated parts.
    package init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// The name as text for people: invalid bytes and control characters are escaped.
    public var escaped: String { PathEscaping.escape(bytes) }

    public var description: String { escaped }

    public static func < (a: FileName, b: FileName) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    // Bytes in one piece, not one `combine` per byte as the synthesized hash does.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(bytes.count)
    }

    public static func == (a: FileName, b: FileName) -> Bool { a.bytes == b.bytes }

    /// Runs `body` with a NUL-terminated C string of the name.
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { try FileName.withCString($0, body) }
    }

    /// Runs `body` with a NUL-terminated C string of `bytes` (one name's). Names up to 255 bytes (every one a
    /// file system gives back) are copied to the stack, not the heap: this runs for every stat and unlink.
    static func withCString<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        let count = bytes.count
        guard count < 256 else {
            return try (Array(bytes) + [0]).withUnsafeBufferPointer { buf in
                try buf.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
            }
        }
        return try withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(bytes))
            buffer[count] = 0
            return try body(buffer.baseAddress!)
        }
    }
}

extension RelativePath {
    /// Runs `body` with a NUL-terminated C string of the last component, cut from the path in place: no name
    /// array made and freed (a worker's check and unlink of each file delete, on the thread the run waits on).
    /// The root has no last component: `body` then gets "".
    func withLastComponentCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { all in
            // Through the pointer: the buffer's subscript checked its bounds at every byte.
            guard let base = all.baseAddress else { return try FileName.withCString(all, body) }
            var start = base + all.count
            while start > base && start[-1] != 0x2F { start -= 1 }
            return try FileName.withCString(UnsafeBufferPointer(start: start, count: base + all.count - start), body)
        }
    }
}
