// Any Encodable value as pretty, sorted-key JSON through the one writer (JSONWriter), byte for byte the layout
// JSONEncoder writes with [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]: two-space indent, `"key" : `,
// an empty array or object as `[` or `{`, a blank line and the closer, no final newline. The reports and the
// baseline file are written with it. Integers, strings, booleans and null only: no output of ours has a
// floating-point number, and one would be an encoding error rather than a guess at JSONEncoder's digits.

package enum PrettyJSON {
    package static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = Slot()
        try value.encode(to: TreeEncoder(slot: root, codingPath: []))
        var out = JSONWriter(capacity: 4096)
        write(root.value ?? .object(Fields()), to: &out, level: 0)
        return out.takeBytes()
    }

    /// An encoded value; containers are objects, so a container is filled after it is handed out.
    fileprivate enum Value {
        case null, bool(Bool), signed(Int64), unsigned(UInt64), string(String)
        case array(Items), object(Fields)
    }
    fileprivate final class Slot { var value: Value? }
    fileprivate final class Items { var slots: [Slot] = [] }
    fileprivate final class Fields { var slots: [String: Slot] = [:] }

    private static func write(_ value: Value, to out: inout JSONWriter, level: Int) {
        switch value {
        case .null: out.literal("null")
        case .bool(let b): out.literal(b ? "true" : "false")
        case .signed(let n): out.integer(n)
        case .unsigned(let n): out.integer(n)
        case .string(let s): out.string(s)
        case .array(let items):
            // Empty: `[`, a blank line, the indented `]`, as JSONEncoder writes it.
            out.byte(0x5B)
            out.literal("\n")
            for (i, slot) in items.slots.enumerated() {
                if i > 0 { out.literal(",\n") }
                out.indent(level + 1)
                write(slot.value ?? .object(Fields()), to: &out, level: level + 1)
            }
            out.literal("\n")
            out.indent(level)
            out.byte(0x5D)
        case .object(let fields):
            out.byte(0x7B)
            out.literal("\n")
            for (i, (key, slot)) in fields.slots.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.literal(",\n") }
                out.indent(level + 1)
                out.string(key)
                out.literal(" : ")
                write(slot.value ?? .object(Fields()), to: &out, level: level + 1)
            }
            out.literal("\n")
            out.indent(level)
            out.byte(0x7D)
        }
    }

    fileprivate static func unsupported(_ what: String, _ path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(what, .init(codingPath: path, debugDescription: "PrettyJSON writes no \(what)"))
    }
}

private struct TreeEncoder: Encoder {
    let slot: PrettyJSON.Slot
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object(let fields)? = slot.value { return KeyedEncodingContainer(Keyed(fields: fields, codingPath: codingPath)) }
        let fields = PrettyJSON.Fields()
        slot.value = .object(fields)
        return KeyedEncodingContainer(Keyed(fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array(let items)? = slot.value { return Unkeyed(items: items, codingPath: codingPath) }
        let items = PrettyJSON.Items()
        slot.value = .array(items)
        return Unkeyed(items: items, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(slot: slot, codingPath: codingPath) }
}

/// Puts one value into a slot: what every container does for each of its values.
private struct Single: SingleValueEncodingContainer {
    let slot: PrettyJSON.Slot
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.value = .null }
    mutating func encode(_ value: Bool) throws { slot.value = .bool(value) }
    mutating func encode(_ value: String) throws { slot.value = .string(value) }
    mutating func encode(_ value: Double) throws { throw PrettyJSON.unsupported("Double", codingPath) }
    mutating func encode(_ value: Float) throws { throw PrettyJSON.unsupported("Float", codingPath) }
    mutating func encode(_ value: Int) throws { slot.value = .signed(Int64(value)) }
    mutating func encode(_ value: Int8) throws { slot.value = .signed(Int64(value)) }
    mutating func encode(_ value: Int16) throws { slot.value = .signed(Int64(value)) }
    mutating func encode(_ value: Int32) throws { slot.value = .signed(Int64(value)) }
    mutating func encode(_ value: Int64) throws { slot.value = .signed(value) }
    mutating func encode(_ value: UInt) throws { slot.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { slot.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { slot.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { slot.value = .unsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { slot.value = .unsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: TreeEncoder(slot: slot, codingPath: codingPath))
    }
}

private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let fields: PrettyJSON.Fields
    var codingPath: [any CodingKey]

    private func single(_ key: Key) -> Single {
        let slot = PrettyJSON.Slot()
        fields.slots[key.stringValue] = slot
        return Single(slot: slot, codingPath: codingPath + [key])
    }

    mutating func encodeNil(forKey key: Key) throws { var s = single(key); try s.encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { var s = single(key); try s.encode(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { var s = single(key); try s.encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        TreeEncoder(slot: single(key).slot, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        TreeEncoder(slot: single(key).slot, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        TreeEncoder(slot: single(Key(stringValue: "super")!).slot, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        TreeEncoder(slot: single(key).slot, codingPath: codingPath + [key])
    }
}

private struct Unkeyed: UnkeyedEncodingContainer {
    let items: PrettyJSON.Items
    var codingPath: [any CodingKey]
    var count: Int { items.slots.count }

    private func single() -> Single {
        let slot = PrettyJSON.Slot()
        items.slots.append(slot)
        return Single(slot: slot, codingPath: codingPath)
    }

    mutating func encodeNil() throws { var s = single(); try s.encodeNil() }
    mutating func encode(_ value: Bool) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: String) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Double) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Float) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Int) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Int8) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Int16) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Int32) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: Int64) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: UInt) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: UInt8) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: UInt16) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: UInt32) throws { var s = single(); try s.encode(value) }
    mutating func encode(_ value: UInt64) throws { var s = single(); try s.encode(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { var s = single(); try s.encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        TreeEncoder(slot: single().slot, codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        TreeEncoder(slot: single().slot, codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { TreeEncoder(slot: single().slot, codingPath: codingPath) }
}
