// Tests for the test-only schema validator and the YAML-to-JSON conversion the schema tests stand on.
// Never reads Docs/: small inline schemas pin each keyword, so a schema test failure means the schema.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("Schema validator") struct SchemaValidatorTests {
    static func validator(_ json: String) throws -> SchemaValidator {
        try SchemaValidator(schema: JSONValue(json: json))
    }

    static func isValid(_ instance: String, _ schema: String) throws -> Bool {
        try validator(schema).validate(JSONValue(json: instance)).isEmpty
    }

    static let keywordCases: [(schema: String, instance: String, valid: Bool)] = [
        (##"{"type": "integer"}"##, "3", true), (##"{"type": "integer"}"##, "3.0", true), (##"{"type": "integer"}"##, "3.5", false),
        (##"{"type": "integer"}"##, "true", false), (##"{"type": ["string", "null"]}"##, "null", true),
        (##"{"type": "number"}"##, "\"1\"", false), (##"{"type": "boolean"}"##, "1", false),
        (##"{"const": 1}"##, "1.0", true), (##"{"const": 1}"##, "\"1\"", false), (##"{"const": true}"##, "1", false),
        (##"{"enum": ["a", 2]}"##, "2", true), (##"{"enum": ["a", 2]}"##, "\"b\"", false),
        (##"{"pattern": "^a+$"}"##, "\"aaa\"", true), (##"{"pattern": "^a+$"}"##, "\"ab\"", false),
        (##"{"pattern": "b"}"##, "\"abc\"", true), (##"{"pattern": "^a+$"}"##, "7", true),
        (##"{"minimum": 1}"##, "0", false), (##"{"minimum": 1}"##, "1", true), (##"{"minimum": 1}"##, "\"0\"", true),
        (##"{"items": {"type": "string"}, "minItems": 1}"##, "[\"a\", \"b\"]", true),
        (##"{"items": {"type": "string"}, "minItems": 1}"##, "[\"a\", 2]", false),
        (##"{"items": {"type": "string"}, "minItems": 1}"##, "[]", false),
        (##"{"required": ["a"], "properties": {"a": {"type": "string"}}, "additionalProperties": false}"##, ##"{"a": "x"}"##, true),
        (##"{"required": ["a"], "properties": {"a": {"type": "string"}}, "additionalProperties": false}"##, ##"{"a": "x", "b": 1}"##, false),
        (##"{"required": ["a"], "properties": {"a": {"type": "string"}}, "additionalProperties": false}"##, ##"{}"##, false),
        (##"{"additionalProperties": {"type": "number"}}"##, ##"{"a": 1}"##, true),
        (##"{"additionalProperties": {"type": "number"}}"##, ##"{"a": "1"}"##, false),
        (##"{"minProperties": 1}"##, ##"{}"##, false), (##"{"minProperties": 1}"##, ##"{"a": null}"##, true),
        (##"{"anyOf": [{"type": "string"}, {"type": "integer"}]}"##, "2", true),
        (##"{"anyOf": [{"type": "string"}, {"type": "integer"}]}"##, "2.5", false),
        (##"{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}"##, ##"{"a": 1}"##, true),
        (##"{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}"##, ##"{"a": 1, "b": 2}"##, false),
        (##"{"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}"##, ##"{}"##, false),
        (##"{"not": {"type": "null"}}"##, "null", false), (##"{"not": {"type": "null"}}"##, "0", true),
        (##"{"definitions": {"d": {"type": "string"}}, "items": {"$ref": "#/definitions/d"}}"##, "[\"x\"]", true),
        (##"{"definitions": {"d": {"type": "string"}}, "items": {"$ref": "#/definitions/d"}}"##, "[1]", false),
        (##"{"properties": {"a": false}}"##, ##"{"a": 1}"##, false), (##"{"properties": {"a": true}}"##, ##"{"a": 1}"##, true),
    ]

    @Test("each keyword accepts and rejects", arguments: keywordCases)
    func keywords(schema: String, instance: String, valid: Bool) throws {
        #expect(try Self.isValid(instance, schema) == valid)
    }

    @Test("violations point into the instance") func pointers() throws {
        let v = try Self.validator(##"{"properties": {"rules": {"items": {"additionalProperties": false}}}}"##)
        let violations = v.validate(try JSONValue(json: ##"{"rules": [{}, {"a/b": 1}]}"##))
        #expect(violations.map(\.instancePath) == ["/rules/1"])
        #expect(violations.first?.message == "unknown property 'a/b'")
    }

    static let unsupportedSchemas: [String] = [
        ##"{"maxLength": 3}"##, ##"{"format": "regex"}"##, ##"{"allOf": [true]}"##, ##"{"items": [true]}"##,
        ##"{"$ref": "#/definitions/missing"}"##, ##"{"$ref": "other.json"}"##, ##"{"type": "int"}"##,
        ##"{"pattern": "("}"##, ##"{"definitions": {"d": true}, "properties": {"a": {"$ref": "#/definitions/d", "type": "string"}}}"##,
        ##"{"$schema": "https://json-schema.org/draft/2020-12/schema"}"##, ##"[]"##,
    ]

    @Test("refuses schemas it cannot check faithfully", arguments: unsupportedSchemas)
    func refusesUnsupported(schema: String) throws {
        let value = try JSONValue(json: schema)
        #expect(throws: SchemaValidator.SchemaError.self) { try SchemaValidator(schema: value) }
    }

    static let scalarCases: [(yaml: String, expected: JSONValue)] = [
        ("1", JSONValue.number(1)), ("-12", .number(-12)), ("0x1F", .number(31)), ("0o17", .number(15)),
        ("1.5", .number(1.5)), ("1e3", .number(1000)), ("true", .bool(true)), ("FALSE", .bool(false)),
        ("~", .null), ("null", .null), ("", .null), ("'1'", .string("1")), ("\"true\"", .string("true")),
        ("yes", .string("yes")), ("on", .string("on")), ("24h", .string("24h")), ("25%", .string("25%")),
        ("!!str 1", .string("1")), ("1.2.3", .string("1.2.3")), ("0x", .string("0x")),
    ]

    @Test("YAML scalars resolve as YAML 1.2's core schema says", arguments: scalarCases)
    func scalars(yaml: String, expected: JSONValue) throws {
        #expect(try JSONValue(yaml: "v: \(yaml)") == .object(["v": expected]))
    }

    @Test("YAML collections become arrays and objects") func collections() throws {
        let value = try JSONValue(yaml: "a: [1, x]\nb: {c: ~}\n")
        #expect(value == .object(["a": .array([.number(1), .string("x")]), "b": .object(["c": .null])]))
        #expect(try JSONValue(yaml: "## only a comment\n") == .null)
    }
}
