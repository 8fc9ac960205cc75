// A glob compiled once and matched against root- or scope-relative byte paths: `*`, `**`, `?`, `[...]`, `{a,b}`.
// Matching never depends on names being valid UTF-8; `*` and `?` never cross a '/'.

@_spi(Layers) import StoragePolicyFileSystem

/// A compiled glob (`*`, `**`, `?`, `[...]`, `{a,b}`) matched against scope-relative byte paths.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written in the policy.
    public let pattern: String
    package let alternatives: [[Segment]]

    /// The pattern as written.
    public var description: String { pattern }

    /// Why a pattern cannot be compiled, with what would be valid.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        /// 0-based character offset in the pattern where the problem is.
        public var offset: Int
        /// The problem, e.g. `unclosed '[' (close it with ']')`.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    package enum Segment: Sendable, Hashable {
        case globstar
        case literal([UInt8])
        case wild([Token])
    }

    package enum Token: Sendable, Hashable {
        case literal([UInt8])
        case any
        case star
        case set(CharacterSet)
    }

    package struct CharacterSet: Sendable, Hashable {
        var negated: Bool
        package var ranges: [ClosedRange<UInt32>]
        package func contains(_ unit: UInt32) -> Bool { ranges.contains { $0.contains(unit) } != negated }
    }

    /// At most this many alternatives after brace expansion: `{a,b}{c,d}...` cannot explode.
    static let maximumAlternatives = 256

    /// Compiles `pattern`; throws `SyntaxError` for an invalid one.
    public init(_ pattern: String) throws(SyntaxError) {
        self.pattern = pattern
        let scalars = Array(pattern.unicodeScalars)
        if scalars.isEmpty { throw SyntaxError(offset: 0, message: "empty pattern") }
        if scalars.first == "/" {
            throw SyntaxError(offset: 0, message: "pattern is absolute; patterns are relative to the rule's path")
        }
        let expanded = try Glob.expandBraces(scalars, offset: 0)
        var alternatives: [[Segment]] = []
        for alternative in expanded {
            alternatives.append(try Glob.compile(alternative))
        }
        self.alternatives = alternatives
    }

    /// True when the relative path (components joined by '/') matches the pattern.
    public func matches(_ path: RelativePath) -> Bool {
        let components = path.bytes.split(separator: 0x2F, omittingEmptySubsequences: false)
        return alternatives.contains { Glob.match($0[...], components[...]) }
    }

    /// True when some path below `directory` could still match, so a walker knows whether a subtree matters.
    package func couldMatchBelow(_ directory: RelativePath) -> Bool {
        let components = directory.isEmpty ? [] : directory.bytes.split(separator: 0x2F, omittingEmptySubsequences: false)
        return alternatives.contains { Glob.prefixCouldMatch($0[...], components[...]) }
    }

    /// True when the pattern has no wildcard at all (it names exactly one path).
    public var isLiteral: Bool {
        alternatives.count == 1 && alternatives[0].allSatisfy { if case .literal = $0 { true } else { false } }
    }

    /// What the last characters of every match must be, per alternative, read from the end: a byte or a
    /// set (`**/*.[tT]xt` -> t, x, [tT]); nil when some alternative can end in anything.
    private var endings: [[Token]]? {
        var result: [[Token]] = []
        for alternative in alternatives {
            var ending: [Token] = []
            switch alternative.last {
            case .literal(let bytes)?: ending = bytes.reversed().map { .literal([$0]) }
            case .wild(let tokens)?:
                loop: for token in tokens.reversed() {
                    switch token {
                    case .literal(let bytes): ending += bytes.reversed().map { .literal([$0]) }
                    case .set: ending.append(token)
                    case .star, .any: break loop
                    }
                }
            default: return nil
            }
            if ending.isEmpty { return nil }
            result.append(ending)
        }
        return result
    }

    /// True when no name can match both globs, judged by the characters their matches must end with
    /// (a safe under-approximation: false means "they might overlap").
    package func isDisjoint(from other: Glob) -> Bool {
        guard let mine = endings, let theirs = other.endings else { return false }
        for a in mine {
            for b in theirs where !Glob.endingsDiffer(a, b) { return false }
        }
        return true
    }

    private static func endingsDiffer(_ a: [Token], _ b: [Token]) -> Bool {
        for (x, y) in zip(a, b) {
            switch (x, y) {
            case (.literal(let p), .literal(let q)) where p != q: return true
            case (.literal(let p), .set(let s)), (.set(let s), .literal(let p)):
                if p[0] < 0x80, !s.contains(UInt32(p[0])) { return true }
            default: continue
            }
        }
        return false
    }

    // MARK: Matching

    private static func match(_ segments: ArraySlice<Segment>, _ components: ArraySlice<ArraySlice<UInt8>>) -> Bool {
        // Backtracking over `**` like `*` over characters: remember the last globstar and retry from there.
        var s = segments.startIndex, c = components.startIndex
        var starS: Int? = nil, starC = 0
        while c < components.endIndex {
            if s < segments.endIndex, case .globstar = segments[s] {
                starS = s; starC = c; s += 1
                continue
            }
            if s < segments.endIndex, matchSegment(segments[s], components[c]) {
                s += 1; c += 1
                continue
            }
            guard let star = starS else { return false }
            starC += 1
            s = star + 1; c = starC
        }
        while s < segments.endIndex, case .globstar = segments[s] { s += 1 }
        return s == segments.endIndex
    }

    private static func prefixCouldMatch(_ segments: ArraySlice<Segment>, _ components: ArraySlice<ArraySlice<UInt8>>) -> Bool {
        guard let first = components.first else { return !segments.isEmpty }
        guard let segment = segments.first else { return false }
        if case .globstar = segment { return true }
        return matchSegment(segment, first) && prefixCouldMatch(segments.dropFirst(), components.dropFirst())
    }

    private static func matchSegment(_ segment: Segment, _ name: ArraySlice<UInt8>) -> Bool {
        switch segment {
        case .globstar: return true
        case .literal(let bytes): return name.elementsEqual(bytes)
        case .wild(let tokens): return matchTokens(tokens, name)
        }
    }

    private static func matchTokens(_ tokens: [Token], _ name: ArraySlice<UInt8>) -> Bool {
        var t = 0, i = name.startIndex
        var starT: Int? = nil, starI = 0
        while i < name.endIndex {
            if t < tokens.count {
                switch tokens[t] {
                case .star:
                    starT = t; starI = i; t += 1
                    continue
                case .literal(let bytes):
                    if name[i...].starts(with: bytes) { t += 1; i += bytes.count; continue }
                case .any:
                    t += 1; i += unitLength(name, at: i)
                    continue
                case .set(let set):
                    let (unit, length) = decodeUnit(name, at: i)
                    if set.contains(unit) { t += 1; i += length; continue }
                }
            }
            guard let star = starT else { return false }
            starI += unitLength(name, at: starI)
            t = star + 1; i = starI
        }
        while t < tokens.count, case .star = tokens[t] { t += 1 }
        return t == tokens.count
    }

    /// One "character" of a name: a valid UTF-8 scalar, or a single byte of an invalid sequence.
    private static func decodeUnit(_ name: ArraySlice<UInt8>, at i: Int) -> (UInt32, Int) {
        let b = name[i]
        if b < 0x80 { return (UInt32(b), 1) }
        let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0
        if length > 0, i + length <= name.endIndex,
           let s = String(validating: name[i..<(i + length)], as: UTF8.self), let scalar = s.unicodeScalars.first {
            return (scalar.value, length)
        }
        // Invalid bytes get values no scalar has, so only `?`, `*` and negated sets match them.
        return (0x110000 + UInt32(b), 1)
    }

    private static func unitLength(_ name: ArraySlice<UInt8>, at i: Int) -> Int { decodeUnit(name, at: i).1 }

    // MARK: Compiling

    /// Expands `{a,b}` (nested, with `\` escapes kept for the compiler) into plain alternatives.
    private static func expandBraces(_ p: [Unicode.Scalar], offset: Int) throws(SyntaxError) -> [[Unicode.Scalar]] {
        var i = 0
        var inClass = false
        while i < p.count {
            let c = p[i]
            if c == "\\" { i += 2; continue }
            if c == "[" && !inClass { inClass = true }
            else if c == "]" && inClass { inClass = false }
            else if c == "{" && !inClass {
                // Find the matching close brace and the top-level commas.
                var depth = 0, j = i, commas: [Int] = []
                var close: Int? = nil
                while j < p.count {
                    if p[j] == "\\" { j += 2; continue }
                    if p[j] == "{" { depth += 1 }
                    else if p[j] == "}" { depth -= 1; if depth == 0 { close = j; break } }
                    else if p[j] == "," && depth == 1 { commas.append(j) }
                    j += 1
                }
                guard let end = close else {
                    throw SyntaxError(offset: offset + i, message: "unclosed '{' (close it with '}', or write '\\{' for a literal brace)")
                }
                let prefix = Array(p[..<i]), suffix = Array(p[(end + 1)...])
                let bounds = [i] + commas + [end]
                var results: [[Unicode.Scalar]] = []
                for k in 0..<(bounds.count - 1) {
                    let choice = Array(p[(bounds[k] + 1)..<bounds[k + 1]])
                    for expanded in try expandBraces(prefix + choice + suffix, offset: offset) {
                        results.append(expanded)
                        if results.count > maximumAlternatives {
                            throw SyntaxError(offset: offset + i, message: "braces expand to more than \(maximumAlternatives) alternatives")
                        }
                    }
                }
                return results
            }
            i += 1
        }
        if inClass { throw SyntaxError(offset: offset + p.count - 1, message: "unclosed '[' (close it with ']')") }
        return [p]
    }

    private static func compile(_ p: [Unicode.Scalar]) throws(SyntaxError) -> [Segment] {
        var segments: [Segment] = []
        var current: [Unicode.Scalar] = []
        var parts: [[Unicode.Scalar]] = []
        var i = 0
        while i < p.count {
            if p[i] == "\\", i + 1 < p.count { current.append(p[i]); current.append(p[i + 1]); i += 2; continue }
            if p[i] == "/" { parts.append(current); current = [] } else { current.append(p[i]) }
            i += 1
        }
        parts.append(current)
        for (index, part) in parts.enumerated() {
            if part.isEmpty {
                if index == parts.count - 1 && index > 0 { continue } // trailing slash: "dir/" is "dir"
                throw SyntaxError(offset: 0, message: "empty path component ('//')")
            }
            if part == ["."] || part == [".", "."] {
                throw SyntaxError(offset: 0, message: "'\(String(String.UnicodeScalarView(part)))' component: patterns cannot leave the rule's path")
            }
            if part == ["*", "*"] {
                if case .globstar? = segments.last { continue }
                segments.append(.globstar)
                continue
            }
            let tokens = try tokenize(part)
            if tokens.count == 1, case .literal(let bytes) = tokens[0] {
                segments.append(.literal(bytes))
            } else if tokens.isEmpty {
                segments.append(.literal([]))
            } else {
                segments.append(.wild(tokens))
            }
        }
        return segments
    }

    private static func tokenize(_ part: [Unicode.Scalar]) throws(SyntaxError) -> [Token] {
        var tokens: [Token] = []
        var literal: [UInt8] = []
        func flush() { if !literal.isEmpty { tokens.append(.literal(literal)); literal = [] } }
        var i = 0
        while i < part.count {
            let c = part[i]
            switch c {
            case "\\" where i + 1 < part.count:
                literal.append(contentsOf: Array(String(part[i + 1]).utf8)); i += 2
            case "*":
                flush()
                if case .star? = tokens.last {} else { tokens.append(.star) }
                i += 1
            case "?":
                flush(); tokens.append(.any); i += 1
            case "[":
                flush()
                var j = i + 1
                var negated = false
                if j < part.count, part[j] == "!" || part[j] == "^" { negated = true; j += 1 }
                var ranges: [ClosedRange<UInt32>] = []
                var first = true
                while j < part.count, part[j] != "]" || first {
                    first = false
                    var lo = part[j].value
                    if part[j] == "\\", j + 1 < part.count { j += 1; lo = part[j].value }
                    if j + 2 < part.count, part[j + 1] == "-", part[j + 2] != "]" {
                        let hi = part[j + 2].value
                        guard lo <= hi else {
                            throw SyntaxError(offset: i, message: "range '\(part[j])-\(part[j + 2])' is backwards")
                        }
                        ranges.append(lo...hi); j += 3
                    } else {
                        ranges.append(lo...lo); j += 1
                    }
                }
                guard j < part.count else { throw SyntaxError(offset: i, message: "unclosed '[' (close it with ']')") }
                tokens.append(.set(CharacterSet(negated: negated, ranges: ranges)))
                i = j + 1
            default:
                literal.append(contentsOf: Array(String(c).utf8)); i += 1
            }
        }
        flush()
        return tokens
    }
}
