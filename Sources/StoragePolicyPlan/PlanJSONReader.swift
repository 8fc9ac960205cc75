// Reads a saved plan piece by piece, as apply reads its plan file: the actions (nearly all of a large plan's
// bytes) are parsed straight into Actions as the pieces arrive, so the file's bytes, JSONDecoder's parse of
// them and the decoded plan are never in memory at once (Docs/performance.md, issue 31: 70 MB of JSON at
// 190,000 actions). The rest of the plan (version, summary, fingerprint, violations, skipped, notes: small)
// is copied as written, with `"actions":[]` in place of the actions, and decoded by JSONDecoder.
//
// The reader takes on only JSON whose meaning is plain: anything it would have to guess about (a number
// with a fraction or exponent, an escaped or duplicate key, a lone surrogate, bytes that are not UTF-8, an
// unknown action, a missing field) is `Unsupported`, and the caller decodes the whole file with
// `Plan.decode(json:)` instead. So every plan file is read to the same Plan, or refused with the same error,
// as before; the tests hold the two equal on plans of every action kind.

import Foundation
@_spi(Layers) import StoragePolicyFileSystem

package struct PlanJSONReader {
    /// What the reader leaves to `Plan.decode(json:)`; `description` says where, for tests.
    package struct Unsupported: Error, CustomStringConvertible {
        package let description: String
    }

    var buffer: ArraySlice<UInt8> = []
    var position = 0
    var ended = false
    let nextPiece: () throws -> ArraySlice<UInt8>?
    /// The string being read (reused: no allocation per string).
    var scratch: [UInt8] = []
    /// Rules and reasons repeat across a plan's actions (`mtime 2d3h ago > 24h`): each distinct one longer
    /// than a small string is kept once and shared by the actions that carry it.
    var interned: [[UInt8]: String] = [:]

    private init(nextPiece: @escaping () throws -> ArraySlice<UInt8>?) { self.nextPiece = nextPiece }

    /// The plan whose JSON `nextPiece` hands over in pieces (nil after the last); `sizeHint`, the file's size,
    /// reserves room for its actions. Throws `Unsupported`, or what `nextPiece` throws.
    package static func read(sizeHint: Int, nextPiece: @escaping () throws -> ArraySlice<UInt8>?) throws -> Plan {
        var reader = PlanJSONReader(nextPiece: nextPiece)
        return try reader.plan(sizeHint: sizeHint)
    }

    // MARK: The plan

    private mutating func plan(sizeHint: Int) throws -> Plan {
        guard try skipSpace() == Byte.openBrace else { throw unsupported("no JSON object") }
        position += 1
        var rest: [UInt8] = [Byte.openBrace]
        var actions: [Action] = []
        var keys = Set<[UInt8]>()
        if try skipSpace() == Byte.closeBrace {
            position += 1
        } else {
            while true {
                let key = try key()
                guard keys.insert(key).inserted else { throw unsupported("a duplicate key") }
                if keys.count > 1 { rest.append(Byte.comma) }
                rest.append(Byte.quote); rest += key; rest.append(Byte.quote); rest.append(Byte.colon)
                if key.elementsEqual("actions".utf8) {
                    // An action of pretty JSON takes 250 to 500 bytes: reserved, not touched, it costs no memory.
                    actions = try actionList(reserve: sizeHint / 160)
                    rest += Array("[]".utf8)
                } else {
                    try copyValue(into: &rest)
                }
                let next = try skipSpace()
                position += 1
                if next == Byte.comma { continue }
                guard next == Byte.closeBrace else { throw unsupported("no ',' or '}' after a key's value") }
                break
            }
        }
        rest.append(Byte.closeBrace)
        guard try skipSpace() == nil else { throw unsupported("bytes after the plan") }
        var plan = try JSONDecoder().decode(Plan.self, from: Data(rest))
        plan.actions = actions
        return plan
    }

    private mutating func actionList(reserve: Int) throws -> [Action] {
        guard try skipSpace() == Byte.openBracket else { throw unsupported("actions is no array") }
        position += 1
        var list: [Action] = []
        list.reserveCapacity(reserve)
        if try skipSpace() == Byte.closeBracket { position += 1; return list }
        while true {
            list.append(try action())
            let next = try skipSpace()
            position += 1
            if next == Byte.comma { continue }
            guard next == Byte.closeBracket else { throw unsupported("no ',' or ']' after an action") }
            return list
        }
    }

    /// One action, as `Action.init(from:)` reads it.
    private mutating func action() throws -> Action {
        guard try skipSpace() == Byte.openBrace else { throw unsupported("an action is no object") }
        position += 1
        var text = [[UInt8]?](repeating: nil, count: Field.textCount)
        var numbers = [Int64?](repeating: nil, count: 2)
        var identity: EntryIdentity? = nil
        var seen = 0
        try members { reader, key in
            guard let field = Field(key) else { return try reader.skipValue() }
            guard seen & (1 << field.rawValue) == 0 else { throw reader.unsupported("a duplicate key") }
            seen |= 1 << field.rawValue
            switch field {
            case .bytes: numbers[0] = try reader.integer()
            case .entries: numbers[1] = try reader.integer()
            case .identity: identity = try reader.identity()
            default: text[field.rawValue] = try reader.string()
            }
        }
        func string(_ field: Field) throws -> String {
            guard let bytes = text[field.rawValue] else { throw unsupported("an action without \(field)") }
            return try intern(bytes)
        }
        func path(_ field: Field, _ base64: Field) throws -> RelativePath {
            let bytes: [UInt8]
            if let encoded = text[base64.rawValue] {
                guard let decoded = Base64.decode(try intern(encoded)) else { throw unsupported("invalid base64") }
                bytes = decoded
            } else {
                guard let plain = text[field.rawValue], PlanJSONReader.isUTF8(plain) else { throw unsupported("an action without \(field)") }
                bytes = plain
            }
            guard let path = RelativePath(bytes) else { throw unsupported("a path that escapes the root") }
            return path
        }
        let kind: Action.Kind
        switch try string(.action) {
        case "delete": kind = .delete
        case "rename": kind = .rename(to: try path(.to, .toBase64))
        case "trash": kind = .trash(to: try path(.to, .toBase64))
        case "mkdir": kind = .mkdir
        case "write-tag": kind = .writeTag
        case "unmark": kind = .unmark(name: try string(.name))
        case "untag": kind = .untag
        case "setxattr":
            let value: [UInt8]
            if let encoded = text[Field.valueBase64.rawValue], let decoded = Base64.decode(try intern(encoded)) {
                value = decoded
            } else {
                value = Array(try string(.value).utf8)
            }
            kind = .setxattr(name: try string(.name), value: value)
        default: throw unsupported("an unknown action")
        }
        var type: FileType? = nil
        if text[Field.type.rawValue] != nil {
            guard let known = FileType(rawValue: try string(.type)) else { throw unsupported("an unknown type") }
            type = known
        }
        guard let bytes = numbers[0] else { throw unsupported("an action without bytes") }
        let entries = numbers[1].map { Int($0) } ?? 1
        return Action(kind: kind, path: try path(.path, .pathBase64), rule: try string(.rule), reason: try string(.reason),
                      bytes: bytes, identity: identity, type: type, entries: entries)
    }

    /// `identity`: `{"dev", "ino", "size", "mtimeNs"}`, or null.
    private mutating func identity() throws -> EntryIdentity? {
        if try null() { return nil }
        guard try skipSpace() == Byte.openBrace else { throw unsupported("an identity is no object") }
        position += 1
        var values = [Int64?](repeating: nil, count: 4)
        var unsigned = [UInt64](repeating: 0, count: 2)
        try members { reader, key in
            let index: Int
            switch key {
            case _ where key.elementsEqual("dev".utf8): index = 0
            case _ where key.elementsEqual("ino".utf8): index = 1
            case _ where key.elementsEqual("size".utf8): index = 2
            case _ where key.elementsEqual("mtimeNs".utf8): index = 3
            default: return try reader.skipValue()
            }
            guard values[index] == nil else { throw reader.unsupported("a duplicate key") }
            if index < 2 {
                unsigned[index] = try reader.unsignedInteger()
                values[index] = 0
            } else {
                guard let value = try reader.integer() else { throw reader.unsupported("a null in an identity") }
                values[index] = value
            }
        }
        guard let size = values[2], let mtime = values[3], values[0] != nil, values[1] != nil else {
            throw unsupported("an identity without dev, ino, size or mtimeNs")
        }
        return EntryIdentity(device: unsigned[0], inode: unsigned[1], size: size, modificationTimeNs: mtime)
    }

    /// The members of an object whose `{` was read, through its `}`: `body` reads each value after its key.
    private mutating func members(_ body: (inout PlanJSONReader, [UInt8]) throws -> Void) throws {
        if try skipSpace() == Byte.closeBrace { position += 1; return }
        while true {
            let key = try key()
            try body(&self, key)
            let next = try skipSpace()
            position += 1
            if next == Byte.comma { continue }
            guard next == Byte.closeBrace else { throw unsupported("no ',' or '}' in an object") }
            return
        }
    }

    /// The action fields, numbered for a bit set of those seen; the text ones first.
    private enum Field: Int, CustomStringConvertible {
        case action, path, pathBase64, to, toBase64, name, value, valueBase64, rule, reason, type
        case bytes, identity, entries
        static let textCount = 11

        init?(_ key: [UInt8]) {
            guard let found = Field.byName[key] else { return nil }
            self = found
        }

        private static let byName: [[UInt8]: Field] = {
            let all: [Field] = [.action, .path, .pathBase64, .to, .toBase64, .name, .value, .valueBase64, .rule, .reason,
                                .type, .bytes, .identity, .entries]
            return Dictionary(uniqueKeysWithValues: all.map { (Array($0.description.utf8), $0) })
        }()

        var description: String {
            switch self {
            case .action: "action"
            case .path: "path"
            case .pathBase64: "pathBase64"
            case .to: "to"
            case .toBase64: "toBase64"
            case .name: "name"
            case .value: "value"
            case .valueBase64: "valueBase64"
            case .rule: "rule"
            case .reason: "reason"
            case .type: "type"
            case .bytes: "bytes"
            case .identity: "identity"
            case .entries: "entries"
            }
        }
    }
}
