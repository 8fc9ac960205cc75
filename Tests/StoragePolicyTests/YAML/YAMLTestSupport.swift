// Helpers for the YAML reader's tests: a compact rendering of node trees and a walk over every node.
// Never used by the library; renders only what a test compares, so assertions read like the YAML itself.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

extension Node {
    /// Flow-style text of the tree: `{a: [1, 'two']}`. Quoted scalars keep single quotes, tags a `!` prefix.
    var flow: String {
        let prefix = tag.map { "<\($0)> " } ?? ""
        switch kind {
        case .scalar(let value, let style):
            return prefix + (style == .plain ? value : "'\(value)'")
        case .sequence(let items):
            return prefix + "[" + items.map(\.flow).joined(separator: ", ") + "]"
        case .mapping(let pairs):
            return prefix + "{" + pairs.map { "\($0.key.flow): \($0.value.flow)" }.joined(separator: ", ") + "}"
        }
    }

    /// Every node in the tree, parents before children, aliases expanded; iterative, so depth costs no stack.
    var allNodes: [Node] {
        var result: [Node] = []
        var pending = [self]
        while let node = pending.popLast() {
            result.append(node)
            switch node.kind {
            case .scalar: break
            case .sequence(let items): pending.append(contentsOf: items.reversed())
            case .mapping(let pairs): pending.append(contentsOf: pairs.reversed().flatMap { [$0.value, $0.key] })
            }
        }
        return result
    }

    /// The value of a scalar key in a mapping, for tests that reach into a tree.
    subscript(key: String) -> Node? {
        mapping?.first { $0.key.scalar == key }?.value
    }
}

/// The error that loading `text` throws, or nil (recorded as a failure) when it loads.
func loadError(_ text: String, limits: YAML.Limits = YAML.Limits(), sourceLocation: SourceLocation = #_sourceLocation) -> YAMLError? {
    loadError(Array(text.utf8), limits: limits, sourceLocation: sourceLocation)
}

func loadError(_ bytes: [UInt8], limits: YAML.Limits = YAML.Limits(), sourceLocation: SourceLocation = #_sourceLocation) -> YAMLError? {
    #expect(throws: YAMLError.self, sourceLocation: sourceLocation) { try YAML.loadAll(bytes, limits: limits) }
}

