// A path relative to a root, as bytes: components joined by '/', no leading '/', no "." or ".." parts.
// It can never name anything outside its root; the empty path is the root itself.
// The small reads apply and the planner make per step (comparisons, prefixes, parents, hashing) are `@inlinable`:
// their callers are in the layers above, and a call across the module boundary cost apply a tenth more
// instructions than the same code in one module (Docs/performance.md, "The layers as targets").

public struct RelativePath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public private(set) var bytes: [UInt8]

    public static let root = RelativePath(unchecked: [])

    @usableFromInline package init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Parses a root-relative path. Repeated and trailing slashes and "." parts are dropped;
    /// nil for an absolute path, a ".." component or a NUL byte: those could escape the root.
    public init?(_ bytes: some Collection<UInt8>) {
        var out: [UInt8] = []
        let raw = Array(bytes)
        if raw.first == 0x2F || raw.contains(0) { return nil }
        for part in raw.split(separator: 0x2F, omittingEmptySubsequences: true) {
            if part.elementsEqual([0x2E]) { continue }
            if part.elementsEqual([0x2E, 0x2E]) { return nil }
            if !out.isEmpty { out.append(0x2F) }
            out.append(contentsOf: part)
        }
        self.bytes = out
    }

    public init?(_ string: String) { self.init(Array(string.utf8)) }

    public init(_ components: [FileName]) {
        var out: [UInt8] = []
        for c in components {
            if !out.isEmpty { out.append(0x2F) }
            out.append(contentsOf: c.bytes)
        }
        self.bytes = out
    }

    @inlinable
    public var isEmpty: Bool { bytes.isEmpty }
    @inlinable
    public var isRoot: Bool { bytes.isEmpty }

    public var components: [FileName] {
        bytes.split(separator: 0x2F).map { FileName(unchecked: Array($0)) }
    }

    /// The last component, nil for the root.
    public var lastComponent: FileName? {
        guard !bytes.isEmpty else { return nil }
        if let slash = bytes.lastIndex(of: 0x2F) { return FileName(unchecked: Array(bytes[(slash + 1)...])) }
        return FileName(unchecked: bytes)
    }

    /// The parent path; the root's parent is the root.
    @inlinable
    public var parent: RelativePath {
        guard let slash = bytes.lastIndex(of: 0x2F) else { return .root }
        return RelativePath(unchecked: Array(bytes[..<slash]))
    }

    public func appending(_ name: FileName) -> RelativePath {
        var copy = self
        if !copy.bytes.isEmpty { copy.bytes.append(0x2F) }
        copy.bytes.append(contentsOf: name.bytes)
        return copy
    }

    public func appending(_ path: RelativePath) -> RelativePath {
        if path.isEmpty { return self }
        if isEmpty { return path }
        return RelativePath(unchecked: bytes + [0x2F] + path.bytes)
    }

    /// True when `self` is `other` or lies beneath it.
    @inlinable
    public func hasPrefix(_ other: RelativePath) -> Bool {
        if other.isEmpty { return true }
        guard bytes.count >= other.bytes.count, bytes.starts(with: other.bytes) else { return false }
        return bytes.count == other.bytes.count || bytes[other.bytes.count] == 0x2F
    }

    /// True when `self` is an entry directly inside `folder` (its parent is `folder`), without building the parent.
    @_spi(Layers) @inlinable
    public func isChild(of folder: RelativePath) -> Bool {
        let n = folder.bytes.count
        // memcmp and memchr rather than loops over bytes: the apply asks this of every delete several times.
        return bytes.withUnsafeBufferPointer { path in
            folder.bytes.withUnsafeBufferPointer { prefix in
                guard !path.isEmpty, let p = path.baseAddress else { return false }
                if n > 0 {
                    guard path.count > n + 1, path[n] == 0x2F, system_memcmp(p, prefix.baseAddress!, n) == 0 else { return false }
                }
                let rest = n == 0 ? 0 : n + 1
                return !system_memchrHolds(p + rest, 0x2F, path.count - rest)
            }
        }
    }

    /// The remainder of `self` below `prefix`, nil when `self` is not under it.
    @inlinable
    public func relative(to prefix: RelativePath) -> RelativePath? {
        guard hasPrefix(prefix) else { return nil }
        if prefix.isEmpty { return self }
        if bytes.count == prefix.bytes.count { return .root }
        return RelativePath(unchecked: Array(bytes[(prefix.bytes.count + 1)...]))
    }

    public var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// The path as UTF-8 text when it is valid UTF-8 (exact), else with U+FFFD replacements (lossy:
    /// callers that need the bytes back must also carry `base64`).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The exact bytes in base64, for machine formats that must round-trip non-UTF-8 names.
    public var base64: String { Base64.encode(bytes) }

    /// The path as text for people: invalid bytes and control characters are escaped (`\xff`, `\n`).
    public var escaped: String { PathEscaping.escape(bytes) }

    public var description: String { escaped }

    @inlinable
    public static func < (a: RelativePath, b: RelativePath) -> Bool {
        a.bytes.lexicographicallyPrecedes(b.bytes)
    }

    // The synthesized hash feeds the hasher one byte at a time; apply looks paths up several times per step.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(bytes.count)
    }

    @inlinable
    public static func == (a: RelativePath, b: RelativePath) -> Bool { a.bytes == b.bytes }
}
