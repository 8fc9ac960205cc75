// Matches a compiled Glob against a path given as a directory's components plus one name, without building
// a RelativePath per entry. Must give exactly Glob.matches' answer (the tests compare the two).

@_spi(Layers) import StoragePolicyModel

package final class PathMatcher: Sendable {
    /// The glob as written (what explain and findings name).
    let glob: Glob
    /// `case: insensitive`: the glob is matched in its lowercase form against lowercased names.
    let foldsCase: Bool
    /// The alternatives matched: the glob's own, or its lowercase form's.
    private let alternatives: [[Glob.Segment]]
    /// Each alternative in the cheapest form that decides it.
    private let forms: [Form]

    private enum Form: Sendable {
        /// `**/*SUFFIX`: only the name's ending matters (the commonest glob in policies).
        case suffix([UInt8])
        /// `**/X`: only the last component matters.
        case nameOnly(Glob.Segment)
        /// `LITERAL/**`: only the first component matters.
        case under([UInt8])
        case general([Glob.Segment])
    }

    package convenience init(_ glob: Glob) { self.init(glob, foldsCase: false) }

    /// A matcher that, with `foldsCase`, ignores letter case: the pattern and every name are lowercased the
    /// same way (Unicode case mapping for valid UTF-8, ASCII letters only in a name that is not).
    package init(_ glob: Glob, foldsCase: Bool) {
        self.glob = glob
        // A lowercased pattern that no longer compiles (a set range such as [Z-a] turned around) keeps its
        // own form: it still matches what it matched before.
        let matched = foldsCase ? ((try? Glob(glob.pattern.lowercased())) ?? glob) : glob
        self.foldsCase = foldsCase
        alternatives = matched.alternatives
        forms = matched.alternatives.map { segments in
            if segments.count == 2, case .globstar = segments[0] {
                if case .wild(let tokens) = segments[1], tokens.count == 2, case .star = tokens[0],
                   case .literal(let suffix) = tokens[1] {
                    return .suffix(suffix)
                }
                if case .globstar = segments[1] { return .general(segments) }
                return .nameOnly(segments[1])
            }
            if segments.count == 2, case .literal(let first) = segments[0], case .globstar = segments[1] {
                return .under(first)
            }
            return .general(segments)
        }
    }

    /// True when `directory/name` (scope-relative; `directory` may be empty) matches.
    package func matches(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        if foldsCase { return matchesFolded(directory.map(PathMatcher.folded)[...], PathMatcher.folded(name)) }
        return matchesFolded(directory, name)
    }

    /// A name in the form case-insensitive matching compares: lowercase.
    static func folded(_ name: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        switch LowercaseForm(name) {
        case .unchanged: return name
        case .changed(let lower): return lower[...]
        case .notUTF8: return ArraySlice(name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 })
        }
    }

    private func matchesFolded(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        for form in forms {
            switch form {
            case .suffix(let suffix):
                if name.count >= suffix.count && name.suffix(suffix.count).elementsEqual(suffix) { return true }
            case .nameOnly(let segment):
                if PathMatcher.matchSegment(segment, name) { return true }
            case .under(let first):
                if (directory.first ?? name).elementsEqual(first) { return true }
            case .general(let segments):
                if PathMatcher.match(segments, Components(directory: directory, name: name)) { return true }
            }
        }
        return false
    }

    /// True when some path below `directory/name` could still match (Glob.couldMatchBelow's answer).
    func couldMatchBelow(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        let components = foldsCase ? Components(directory: directory.map(PathMatcher.folded)[...], name: PathMatcher.folded(name))
            : Components(directory: directory, name: name)
        for segments in alternatives {
            var s = 0
            var ok = true
            for c in 0..<components.count {
                guard s < segments.count else { ok = false; break }
                if case .globstar = segments[s] { break }
                if !PathMatcher.matchSegment(segments[s], components[c]) { ok = false; break }
                s += 1
                if c == components.count - 1 && s == segments.count { ok = false }
            }
            if ok { return true }
        }
        return false
    }

    /// A directory's components followed by one name, indexed without copying.
    package struct Components {
        package let directory: ArraySlice<ArraySlice<UInt8>>
        package let name: ArraySlice<UInt8>
        package var count: Int { directory.count + 1 }
        package subscript(i: Int) -> ArraySlice<UInt8> {
            i < directory.count ? directory[directory.startIndex + i] : name
        }
    }

    // Backtracking over `**` like `*` over characters, exactly as Glob does it.
    private static func match(_ segments: [Glob.Segment], _ components: Components) -> Bool {
        var s = 0, c = 0
        var starS: Int? = nil, starC = 0
        let count = components.count
        while c < count {
            if s < segments.count, case .globstar = segments[s] {
                starS = s; starC = c; s += 1
                continue
            }
            if s < segments.count, matchSegment(segments[s], components[c]) {
                s += 1; c += 1
                continue
            }
            guard let star = starS else { return false }
            starC += 1
            s = star + 1; c = starC
        }
        while s < segments.count, case .globstar = segments[s] { s += 1 }
        return s == segments.count
    }

    static func matchSegment(_ segment: Glob.Segment, _ name: ArraySlice<UInt8>) -> Bool {
        switch segment {
        case .globstar: return true
        case .literal(let bytes): return name.elementsEqual(bytes)
        case .wild(let tokens): return matchTokens(tokens, name)
        }
    }

    private static func matchTokens(_ tokens: [Glob.Token], _ name: ArraySlice<UInt8>) -> Bool {
        // The common `*.ext` form: a suffix compare.
        if tokens.count == 2, case .star = tokens[0], case .literal(let suffix) = tokens[1] {
            return name.count >= suffix.count && name.suffix(suffix.count).elementsEqual(suffix)
        }
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
                    t += 1; i += decodeUnit(name, at: i).length
                    continue
                case .set(let set):
                    let (unit, length) = decodeUnit(name, at: i)
                    if set.contains(unit) { t += 1; i += length; continue }
                }
            }
            guard let star = starT else { return false }
            starI += decodeUnit(name, at: starI).length
            t = star + 1; i = starI
        }
        while t < tokens.count, case .star = tokens[t] { t += 1 }
        return t == tokens.count
    }

    /// One "character": a valid UTF-8 scalar, or one byte of an invalid sequence (valued past U+10FFFF,
    /// as Glob does, so only `?`, `*` and negated sets match it).
    private static func decodeUnit(_ name: ArraySlice<UInt8>, at i: Int) -> (unit: UInt32, length: Int) {
        let b = name[i]
        if b < 0x80 { return (UInt32(b), 1) }
        let invalid = (0x110000 + UInt32(b), 1)
        let length = b >= 0xF8 ? 0 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0
        guard length > 0, i + length <= name.endIndex else { return invalid }
        var value = UInt32(b) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length {
            let c = name[i + k]
            guard c & 0xC0 == 0x80 else { return invalid }
            value = value << 6 | UInt32(c & 0x3F)
        }
        // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= minimum, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return invalid }
        return (value, length)
    }
}
