// A JSON Schema draft-07 validator for exactly the keywords Docs/policy.schema.json uses; tests only.
// Never skips a keyword it does not implement: a schema using one is refused, so no check is silently lost.
import Foundation

/// Validates JSON values against a draft-07 schema whose `$ref`s point into its own `#/definitions/`.
///
///     let validator = try SchemaValidator(schema: schema)
///     let violations = validator.validate(instance)   // empty when the instance is valid
struct SchemaValidator {
    /// Keywords that constrain an instance; each is implemented in `check`.
    static let validationKeywords: Set<String> = [
        "type", "properties", "required", "additionalProperties", "enum", "const", "pattern", "items",
        "oneOf", "anyOf", "not", "minItems", "minProperties", "minimum", "$ref",
    ]
    /// Keywords that only describe (for editors and readers) and never affect validity.
    static let annotationKeywords: Set<String> = [
        "$schema", "$id", "$comment", "title", "description", "markdownDescription", "default", "examples", "definitions",
    ]
    static let typeNames: Set<String> = ["null", "boolean", "object", "array", "number", "string", "integer"]
    static let draft07 = "http://json-schema.org/draft-07/schema#"

    /// Why a schema cannot be used; `path` is a JSON pointer into the schema.
    struct SchemaError: Error, CustomStringConvertible {
        var path: String
        var message: String
        var description: String { "schema \(path.isEmpty ? "/" : path): \(message)" }
    }

    /// One reason an instance is invalid; `instancePath` is a JSON pointer into the instance.
    struct Violation: CustomStringConvertible, Sendable {
        var instancePath: String
        var keyword: String
        var message: String
        var description: String { "\(instancePath.isEmpty ? "/" : instancePath): \(message) [\(keyword)]" }
    }

    let schema: JSONValue
    private let definitions: [String: JSONValue]
    private let regexes: [String: NSRegularExpression]

    /// Checks the whole schema up front: known keywords only, well-formed values, resolvable `$ref`s and
    /// compilable patterns.
    init(schema: JSONValue) throws(SchemaError) {
        self.schema = schema
        if case .object = schema {} else { throw SchemaError(path: "", message: "the root schema must be an object") }
        if let declared = schema["$schema"], declared != .string(SchemaValidator.draft07) {
            throw SchemaError(path: "/$schema", message: "expected \(SchemaValidator.draft07), found \(declared.text)")
        }
        switch schema["definitions"] {
        case nil: definitions = [:]
        case .object(let d)?: definitions = d
        case let other?: throw SchemaError(path: "/definitions", message: "expected an object, found \(other.text)")
        }
        var patterns: [String: NSRegularExpression] = [:]
        try SchemaValidator.inspect(schema, at: "", definitions: definitions, patterns: &patterns)
        regexes = patterns
    }

    /// Every violation of the schema by `instance`; empty when it is valid.
    func validate(_ instance: JSONValue) -> [Violation] {
        var violations: [Violation] = []
        check(instance, against: schema, at: "", into: &violations)
        return violations
    }

    // MARK: Checking the schema

    private static func inspect(_ node: JSONValue, at path: String, definitions: [String: JSONValue],
                                patterns: inout [String: NSRegularExpression]) throws(SchemaError) {
        func fail(_ message: String, _ key: String? = nil) -> SchemaError {
            SchemaError(path: key.map { path + "/" + pointerEscape($0) } ?? path, message: message)
        }
        func subschema(_ value: JSONValue, _ at: String) throws(SchemaError) {
            try inspect(value, at: at, definitions: definitions, patterns: &patterns)
        }
        if case .bool = node { return }
        guard let object = node.object else { throw fail("a schema must be an object or a boolean, found \(node.text)") }
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            let at = path + "/" + pointerEscape(key)
            switch key {
            case "$ref":
                guard let ref = value.string, ref.hasPrefix("#/definitions/"),
                      definitions[String(ref.dropFirst("#/definitions/".count))] != nil else {
                    throw fail("only references to an existing #/definitions/NAME are supported, found \(value.text)", key)
                }
                // Draft-07 ignores every sibling of $ref: a constraint there would look checked but never be.
                if let ignored = object.keys.first(where: { $0 != "$ref" && !annotationKeywords.contains($0) }) {
                    throw fail("'\(ignored)' next to $ref is ignored by draft-07 validators", key)
                }
            case "type":
                let names = value.array ?? [value]
                guard !names.isEmpty, names.allSatisfy({ $0.string.map(typeNames.contains) ?? false }) else {
                    throw fail("unknown type \(value.text)", key)
                }
            case "properties", "definitions":
                guard let members = value.object else { throw fail("expected an object of schemas", key) }
                for (name, member) in members { try subschema(member, at + "/" + pointerEscape(name)) }
            case "additionalProperties", "items", "not":
                if key == "items", value.array != nil { throw fail("tuple-form items is not supported", key) }
                try subschema(value, at)
            case "oneOf", "anyOf":
                guard let branches = value.array, !branches.isEmpty else { throw fail("expected a non-empty array", key) }
                for (i, branch) in branches.enumerated() { try subschema(branch, at + "/\(i)") }
            case "required":
                guard let names = value.array, names.allSatisfy({ $0.string != nil }), Set(names).count == names.count else {
                    throw fail("expected an array of distinct strings", key)
                }
            case "enum":
                guard let values = value.array, !values.isEmpty else { throw fail("expected a non-empty array", key) }
            case "pattern":
                guard let text = value.string else { throw fail("expected a string", key) }
                do { patterns[text] = try NSRegularExpression(pattern: text) } catch {
                    throw fail("invalid regular expression: \(error)", key)
                }
            case "minItems", "minProperties":
                guard let n = value.number, n >= 0, n.rounded() == n else { throw fail("expected a non-negative integer", key) }
            case "minimum":
                guard value.number != nil else { throw fail("expected a number", key) }
            case "const", "default", "examples", "$schema", "$id", "$comment":
                break
            case "title", "description", "markdownDescription":
                guard value.string != nil else { throw fail("expected a string", key) }
            default:
                throw fail("unsupported keyword '\(key)'", key)
            }
        }
    }

    // MARK: Checking an instance

    private func check(_ value: JSONValue, against schema: JSONValue, at path: String, into violations: inout [Violation]) {
        func report(_ keyword: String, _ message: String) {
            violations.append(Violation(instancePath: path, keyword: keyword, message: message))
        }
        if case .bool(let allowed) = schema {
            if !allowed { report("false", "no value is allowed here") }
            return
        }
        guard let keywords = schema.object else { return }
        if let ref = keywords["$ref"]?.string, let target = definitions[String(ref.dropFirst("#/definitions/".count))] {
            check(value, against: target, at: path, into: &violations)
            return
        }
        if let type = keywords["type"] {
            let names = (type.array ?? [type]).compactMap(\.string)
            if !names.contains(where: { SchemaValidator.has(value, type: $0) }) {
                report("type", "expected \(names.joined(separator: " or ")), found \(value.text)")
            }
        }
        if let expected = keywords["const"], !SchemaValidator.equal(value, expected) {
            report("const", "expected \(expected.text), found \(value.text)")
        }
        if let allowed = keywords["enum"]?.array, !allowed.contains(where: { SchemaValidator.equal(value, $0) }) {
            report("enum", "\(value.text) is not one of \(allowed.map(\.text).joined(separator: ", "))")
        }
        if case .string(let text) = value, let pattern = keywords["pattern"]?.string, let regex = regexes[pattern],
           regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
            report("pattern", "\(value.text) does not match \(pattern)")
        }
        if case .number(let n) = value, let minimum = keywords["minimum"]?.number, n < minimum {
            report("minimum", "\(value.text) is below the minimum \(JSONValue.number(minimum).text)")
        }
        if case .array(let items) = value {
            if let min = keywords["minItems"]?.number, Double(items.count) < min {
                report("minItems", "expected at least \(Int(min)) items, found \(items.count)")
            }
            if let itemSchema = keywords["items"] {
                for (i, item) in items.enumerated() { check(item, against: itemSchema, at: path + "/\(i)", into: &violations) }
            }
        }
        if case .object(let members) = value {
            if let min = keywords["minProperties"]?.number, Double(members.count) < min {
                report("minProperties", "expected at least \(Int(min)) properties, found \(members.count)")
            }
            for name in keywords["required"]?.array?.compactMap(\.string) ?? [] where members[name] == nil {
                report("required", "missing required property '\(name)'")
            }
            let properties = keywords["properties"]?.object ?? [:]
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                let memberPath = path + "/" + SchemaValidator.pointerEscape(name)
                if let propertySchema = properties[name] {
                    check(member, against: propertySchema, at: memberPath, into: &violations)
                } else if let additional = keywords["additionalProperties"] {
                    if additional == .bool(false) {
                        report("additionalProperties", "unknown property '\(name)'")
                    } else {
                        check(member, against: additional, at: memberPath, into: &violations)
                    }
                }
            }
        }
        if let branches = keywords["anyOf"]?.array {
            let results = branches.map { branchViolations(value, $0, at: path) }
            if !results.contains(where: \.isEmpty) {
                report("anyOf", "matches none of the \(branches.count) alternatives: " + summary(results))
            }
        }
        if let branches = keywords["oneOf"]?.array {
            let results = branches.map { branchViolations(value, $0, at: path) }
            let matched = results.filter(\.isEmpty).count
            if matched == 0 {
                report("oneOf", "matches none of the \(branches.count) alternatives: " + summary(results))
            } else if matched > 1 {
                report("oneOf", "matches \(matched) of the \(branches.count) alternatives; exactly one must match")
            }
        }
        if let negated = keywords["not"], branchViolations(value, negated, at: path).isEmpty {
            report("not", "matches a schema it must not match")
        }
    }

    private func branchViolations(_ value: JSONValue, _ schema: JSONValue, at path: String) -> [Violation] {
        var violations: [Violation] = []
        check(value, against: schema, at: path, into: &violations)
        return violations
    }

    private func summary(_ results: [[Violation]]) -> String {
        results.enumerated().map { i, violations in
            "(\(i + 1)) " + violations.map(\.description).joined(separator: "; ")
        }.joined(separator: " ")
    }

    // MARK: Values

    static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("object", .object), ("array", .array),
             ("number", .number), ("string", .string):
            return true
        case ("integer", .number(let n)):
            return n.isFinite && n.rounded() == n  // draft-07: any number with a zero fractional part
        default:
            return false
        }
    }

    /// JSON Schema equality: numbers by value, objects regardless of key order.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool { a == b }

    static func pointerEscape(_ token: String) -> String {
        token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
