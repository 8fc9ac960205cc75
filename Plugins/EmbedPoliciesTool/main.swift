// Run by the EmbedPolicies build plugin: `EmbedPoliciesTool OUTPUT.swift POLICY.yaml...` writes a Swift source
// holding each policy's name (the file name without `.yaml`), its `description:` and its text (the file without
// its final newlines). Every byte outside printable ASCII, and every quote and backslash, is written as an
// escape, so any file embeds exactly and nothing in it can end the literal or interpolate.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: EmbedPoliciesTool OUTPUT.swift POLICY.yaml...\n".utf8))
    exit(2)
}

/// A Swift string literal of `text`.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case " "..."~": out.unicodeScalars.append(scalar)
        default: out += "\\u{\(String(scalar.value, radix: 16))}"
        }
    }
    return out + "\""
}

var source = """
    // Generated at build time by the EmbedPolicies plugin from Policies/*.yaml: not in the source tree, never edited.

    extension BundledPolicies {
        /// Each file of Policies/: its name, its `description:` and its text without the final newlines.
        static let embedded: [(name: String, description: String, text: String)] = [

    """
for path in arguments.dropFirst() {
    let url = URL(fileURLWithPath: path)
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
        FileHandle.standardError.write(Data("EmbedPoliciesTool: \(path): cannot be read as UTF-8 text\n".utf8))
        exit(1)
    }
    var body = Substring(text)
    while body.hasSuffix("\n") { body = body.dropLast() }
    let description = text.split(separator: "\n", omittingEmptySubsequences: false)
        .first { $0.hasPrefix("description:") }
        .map { $0.dropFirst("description:".count).trimmingCharacters(in: .whitespaces) } ?? ""
    let name = url.deletingPathExtension().lastPathComponent
    source += "        (name: \(literal(name)), description: \(literal(description)), text: \(literal(String(body)))),\n"
}
source += "    ]\n}\n"

do {
    // Rewritten only when it changes, so an unchanged policy set compiles nothing again.
    if FileManager.default.contents(atPath: output) != Data(source.utf8) {
        try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
    }
} catch {
    FileHandle.standardError.write(Data("EmbedPoliciesTool: cannot write \(output): \(error)\n".utf8))
    exit(1)
}
