// The executable's only window on the terminal: stdout, stderr, TTY detection, colour (NO_COLOR, FORCE_COLOR)
// and a progress line on stderr that is drawn only on a TTY.

enum Terminal {
    static let stdoutIsTTY = system_isatty(1)
    static let stderrIsTTY = system_isatty(2)
    static let stdinIsTTY = system_isatty(0)

    /// Colour on a TTY unless TERM=dumb; never with NO_COLOR set to anything but the empty string (no-color.org:
    /// an empty NO_COLOR is as good as none); always with FORCE_COLOR or CLICOLOR_FORCE set (to anything but
    /// empty, 0 or false), for CI logs, which are no TTY. NO_COLOR wins over both: whoever asked for none gets none.
    static let useColor: Bool = colorEnabled(isTTY: stdoutIsTTY, environment: system_getenv)

    /// The same rule for stderr, where diagnostics and progress go.
    static let useColorOnStderr: Bool = colorEnabled(isTTY: stderrIsTTY, environment: system_getenv)

    /// The colour rule for one stream, given its TTY-ness and the environment.
    static func colorEnabled(isTTY: Bool, environment: (String) -> String?) -> Bool {
        if let noColor = environment("NO_COLOR"), !noColor.isEmpty { return false }
        for name in ["FORCE_COLOR", "CLICOLOR_FORCE"] {
            if let force = environment(name), !force.isEmpty, force != "0", force.lowercased() != "false" { return true }
        }
        if environment("TERM") == "dumb" { return false }
        return isTTY
    }

    static func out(_ text: String, terminator: String = "\n") {
        write(1, text + terminator)
    }

    static func err(_ text: String, terminator: String = "\n") {
        write(2, text + terminator)
    }

    /// Writes raw bytes (e.g. JSON data) to stdout.
    static func out(bytes: [UInt8]) { writeBytes(1, bytes) }

    private static func write(_ fd: Int32, _ text: String) { writeBytes(fd, Array(text.utf8)) }

    private static func writeBytes(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { system_write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 { if system_errno == .interrupted { continue } else { return } }
            offset += n
        }
    }

    enum Style: String { case bold = "1", red = "31", green = "32", yellow = "33", blue = "34", dim = "2", cyan = "36" }

    static func styled(_ text: String, _ style: Style, enabled: Bool = useColor) -> String {
        enabled ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// Asks a yes/no question on the TTY; false when stdin is not a TTY or the answer is not yes.
    static func confirm(_ question: String) -> Bool {
        guard stdinIsTTY else { return false }
        err(question + " [y/N] ", terminator: "")
        guard let line = readLine() else { return false }
        return ["y", "yes"].contains(line.lowercased().trimmingCharacters())
    }
}

/// A single self-overwriting status line on stderr, throttled, shown only when stderr is a TTY.
final class ProgressLine: @unchecked Sendable {
    private var lastDraw: Double = 0
    private var drawn = false
    private let enabled: Bool
    private let start = ProgressLine.now()

    init(enabled: Bool = Terminal.stderrIsTTY) { self.enabled = enabled }

    /// Redraws at most ten times a second, and only after the first half second.
    func update(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        let t = ProgressLine.now()
        guard t - start > 0.5, t - lastDraw > 0.1 else { return }
        lastDraw = t
        drawn = true
        Terminal.err("\r\u{1B}[K" + String(text().prefix(100)), terminator: "")
    }

    func finish() {
        if drawn { Terminal.err("\r\u{1B}[K", terminator: "") }
        drawn = false
    }

    static func now() -> Double { system_monotonicSeconds() }
}

extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
