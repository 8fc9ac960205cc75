// JSONValue: the JSON data model the schema tests validate, read from JSON text or from a YAML node tree.
// Never guesses a scalar's type beyond YAML 1.2's core schema: quoted scalars stay strings, as editors see them.
import Foundation
@testable import StoragePolicy
@testable import StoragePolicyModel

/// A JSON value. Numbers are doubles (JSON Schema compares numbers by value: `1 == 1.0`).
enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    var object: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    var string: String? { if case .string(let s) = self { s } else { nil } }
    var number: Double? { if case .number(let n) = self { n } else { nil } }

    subscript(key: String) -> JSONValue? { object?[key] }

    /// Compact JSON-like text for messages: `{"a": [1, "x"]}`.
    var text: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .string(let s): return "\"\(s)\""
        case .array(let items): return "[" + items.map(\.text).joined(separator: ", ") + "]"
        case .object(let pairs):
            return "{" + pairs.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value.text)" }.joined(separator: ", ") + "}"
        }
    }
}

// MARK: JSON

extension JSONValue: Decodable {
    /// Decodes any JSON; `true` stays a Bool and `1` a number (the decoder refuses to mix them up).
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let b = try? container.decode(Bool.self) { self = .bool(b) }
        else if let n = try? container.decode(Double.self) { self = .number(n) }
        else if let s = try? container.decode(String.self) { self = .string(s) }
        else if let a = try? container.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    init(json: String) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
    }
}

// MARK: YAML

extension JSONValue {
    /// The JSON value an editor's YAML language server sees for a document: plain scalars resolved by
    /// YAML 1.2's core schema (null, bool, int, float), everything else a string. Nil input is null.
    init(yaml node: Node?) {
        guard let node else { self = .null; return }
        switch node.kind {
        case .scalar(let text, let style):
            self = JSONValue.scalar(text, plain: style == .plain, tag: node.tag)
        case .sequence(let items):
            self = .array(items.map { JSONValue(yaml: $0) })
        case .mapping(let pairs):
            var object: [String: JSONValue] = [:]
            for (key, value) in pairs { object[key.scalar ?? key.kindName] = JSONValue(yaml: value) }
            self = .object(object)
        }
    }

    /// Parses YAML text with the project's reader and converts it.
    init(yaml text: String) throws {
        self.init(yaml: try YAML.load(text))
    }

    private static let core = "tag:yaml.org,2002:"

    static func scalar(_ text: String, plain: Bool, tag: String?) -> JSONValue {
        switch tag {
        case nil where plain: return resolvePlain(text) ?? .string(text)
        case core + "null": return .null
        case core + "bool", core + "int", core + "float":
            return resolvePlain(text).flatMap { $0 == .null ? nil : $0 } ?? .string(text)
        default: return .string(text)  // quoted, `!!str`, `!` or an application tag
        }
    }

    /// YAML 1.2 core schema resolution of a plain scalar; nil when it is a string.
    static func resolvePlain(_ text: String) -> JSONValue? {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .number(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .number(-.infinity)
        case ".nan", ".NaN", ".NAN": return .number(.nan)
        default: break
        }
        if text.wholeMatch(of: /[-+]?[0-9]+/) != nil { return Double(text).map(JSONValue.number) }
        if let m = text.wholeMatch(of: /0o([0-7]+)/) { return UInt64(m.1, radix: 8).map { .number(Double($0)) } }
        if let m = text.wholeMatch(of: /0x([0-9a-fA-F]+)/) { return UInt64(m.1, radix: 16).map { .number(Double($0)) } }
        if text.wholeMatch(of: /[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?/) != nil {
            return Double(text).map(JSONValue.number)
        }
        return nil
    }
}
