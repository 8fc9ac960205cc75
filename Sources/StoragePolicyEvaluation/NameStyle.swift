// The name a naming rule wants for a name: `case: lower | upper | kebab | snake`, `spaces: dash | underscore`,
// `unicode: nfc | nfd`, applied in that order. Bytes in, bytes out; only valid UTF-8 is restyled. `case: lower`
// alone is LowercaseForm exactly (the fast path most rules take, and the words plans have always used).
import Foundation
@_spi(Layers) import StoragePolicyModel

package struct NameStyle: Sendable {
    let naming: Naming

    /// Whether the rule renames at all.
    package var renames: Bool { naming.letterCase != nil || naming.spaces != nil || naming.unicode != nil }

    /// Only `case: lower`: today's lowercase rule, its messages and its case-collision findings.
    var isLowercaseOnly: Bool { naming.letterCase == .lower && naming.spaces == nil && naming.unicode == nil }

    /// What the style makes of `name`.
    func form(_ name: ArraySlice<UInt8>) -> LowercaseForm {
        if isLowercaseOnly { return LowercaseForm(name) }
        guard let text = String(validating: name, as: UTF8.self) else { return .notUTF8 }
        let styled = Array(restyled(text).utf8)
        return styled.elementsEqual(name) ? .unchanged : .changed(styled)
    }

    /// Why a name is renamed, as plans say it.
    package var reason: String {
        if isLowercaseOnly { return "name has uppercase letters" }
        return "name is not \(description)"
    }

    /// `kebab case, NFC`: what the rule asks of names.
    package var description: String {
        var parts: [String] = []
        switch naming.letterCase {
        case .lower?: parts.append("lowercase")
        case .upper?: parts.append("uppercase")
        case .kebab?: parts.append("kebab case")
        case .snake?: parts.append("snake case")
        case nil: break
        }
        if let s = naming.spaces { parts.append(s == .dash ? "without spaces (dashes)" : "without spaces (underscores)") }
        if let u = naming.unicode { parts.append(u.rawValue.uppercased()) }
        return parts.joined(separator: ", ")
    }

    private func restyled(_ text: String) -> String {
        var out = text
        switch naming.letterCase {
        case .lower?: out = out.lowercased()
        case .upper?: out = out.uppercased()
        case .kebab?: out = NameStyle.separated(out.lowercased(), by: "-", replacing: [" ", "_"])
        case .snake?: out = NameStyle.separated(out.lowercased(), by: "_", replacing: [" ", "-"])
        case nil: break
        }
        switch naming.spaces {
        case .dash?: out = String(out.map { $0 == " " ? "-" : $0 })
        case .underscore?: out = String(out.map { $0 == " " ? "_" : $0 })
        case nil: break
        }
        switch naming.unicode {
        case .nfc?: out = out.precomposedStringWithCanonicalMapping
        case .nfd?: out = out.decomposedStringWithCanonicalMapping
        case nil: break
        }
        return out
    }

    /// `My  File_x.txt` -> `my-file-x.txt`: each run of the separators (and of `separator` itself) becomes one
    /// `separator`; the extension (from the last dot) is kept as it is; a leading or trailing run stays one.
    static func separated(_ text: String, by separator: Character, replacing others: Set<Character>) -> String {
        let scalars = Array(text)
        let dot = scalars.lastIndex(of: ".").flatMap { $0 > 0 && $0 < scalars.count - 1 ? $0 : nil } ?? scalars.count
        var stem = ""
        var inRun = false
        for c in scalars[..<dot] {
            if others.contains(c) || c == separator {
                if !inRun { stem.append(separator) }
                inRun = true
            } else {
                stem.append(c)
                inRun = false
            }
        }
        return stem + String(scalars[dot...])
    }
}
